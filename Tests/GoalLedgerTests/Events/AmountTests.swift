import Foundation
import Testing

@testable import GoalLedger

/// `Amount` is an exact decimal: a whole number of millionths, made from text, from millionths
/// or from a `Double`'s shortest form, printed in plain decimal, summed exactly; records written
/// when amounts were doubles read as the same decimals and encode back to their bytes.
struct AmountTests {
    @Test func theTypedAPIBuildsAmountsFromTextAndMillionthsExactly() throws {
        #expect(try Amount("999999999999.999999").micros == 999_999_999_999_999_999)
        #expect(try Amount("-999999999999.999999").micros == -999_999_999_999_999_999)
        #expect(try Amount("123456789012.345678").description == "123456789012.345678")
        #expect(try Amount("9007199254.740991").micros == 9_007_199_254_740_991)
        #expect(try Amount("1e12").description == "1000000000000")
        #expect(try Amount("1.5E3").description == "1500")
        #expect(try Amount("25e-1").description == "2.5")
        #expect(try Amount("1.0000000").description == "1", "trailing zeros are no digits")
        #expect(try Amount("-0").micros == 0 && Amount("0e999").micros == 0)
        #expect(try Amount(micros: 1).description == "0.000001")
        #expect(try Amount(micros: -500_000).description == "-0.5")
        #expect(try Amount(micros: 9_999_999_999_999_999).description == "9999999999.999999")
        #expect(try Amount(whole: 7).description == "7")
        #expect(try Amount(0.1).micros == 100_000 && Amount(9007199254.740993).micros == 9_007_199_254_740_993)
        #expect(try Amount.target("0.000001").micros == 1)
        // No Double in its storage: the type holds its millionths and nothing else.
        #expect(Mirror(reflecting: try Amount("2.5")).children.map { "\(type(of: $0.value))" } == ["Int128"])

        let refusals: [(String, String)] = [
            ("0.1234567", "must have at most 6 digits after the decimal point, got 7 (0.1234567)"),
            ("2.0000000000000001", "must have at most 6 digits after the decimal point, got 16 (2.0000000000000001)"),
            ("1000000000000.000001", "must be a number between -1e12 and 1e12, got 1000000000000.000001"),
            ("1e400", "must be a number between -1e12 and 1e12, got 1e400"),
            ("1e-400", "must have at most 6 digits after the decimal point, got 400 (1e-400)"),
            ("1e999999999999", "must be a number between -1e12 and 1e12, got 1e999999999999"),
            ("", "must be a decimal number, got "), ("1.", "must be a decimal number, got 1."), ("+1", "must be a decimal number, got +1"),
            ("0x10", "must be a decimal number, got 0x10"), (".5", "must be a decimal number, got .5"), ("1e", "must be a decimal number, got 1e"),
        ]
        for (text, message) in refusals {
            #expect(throws: FieldError("amount", message)) { try Amount(text) }
        }
        #expect(throws: FieldError("amount", "must be a number between -1e12 and 1e12, got 1000000000000.000001")) {
            try Amount(micros: 1_000_000_000_000_000_001)
        }
        #expect(throws: FieldError("amount", "must be a number between -1e12 and 1e12, got 9223372036854775807")) {
            try Amount(whole: .max)
        }
        #expect(throws: FieldError("target", "must be greater than 0, got 0")) { try Amount.target("0") }
        #expect(throws: FieldError("target", "must be greater than 0, got -0.5")) { try Amount.target(-0.5) }
        #expect(throws: FieldError.self) { try Amount(Double.nan) }
    }

    @Test func jsonLinesReadEveryValueOfTheRangeAndNameTheFieldOfOneOutsideIt() throws {
        func read(_ amount: String) throws(FieldError) -> Amount? {
            let line = #"{"type":"progressRecorded","goal":"5A1E0C2B-7D3F-4E8A-9B6C-0D1E2F3A4B5C","amount":\#(amount)}"#
            let draft = try EventDraft(json: try! JSONParser.parse(line), schema: 2)
            guard case .progressRecorded(let p) = draft.payload else { return nil }
            return p.amount
        }
        for text in ["999999999999.999999", "123456789012.345678", "-999999999999.999999", "9007199254.740991", "9007199254.740993"] {
            #expect(try read(text)?.description == text)
        }
        #expect(throws: FieldError("amount", "must have at most 6 digits after the decimal point, got 16 (2.0000000000000001)")) {
            try read("2.0000000000000001")
        }
        #expect(throws: FieldError("amount", "must be a number between -1e12 and 1e12, got 1e400")) { try read("1e400") }
        #expect(throws: FieldError("amount", "must be a number between -1e12 and 1e12, got 10000000000000")) { try read("1e13") }
    }

    /// Random amounts over the whole range (±1e12, 0 to 6 decimals), summed in random orders,
    /// agree with integer arithmetic; each printed form, and its JSON, reads back as the same
    /// value, and a record holding it decodes to it.
    @Test(arguments: [1, 2, 3])
    func randomAmountsSumAndPrintExactly(_ seed: UInt64) throws {
        var rng = SeededRandom(seed: seed &* 7_919)
        for _ in 0..<200 {
            let count = Int.random(in: 1...30, using: &rng)
            var micros: [Int64] = []
            for _ in 0..<count {
                let decimals = Int.random(in: 0...6, using: &rng)
                let step = [1_000_000, 100_000, 10_000, 1_000, 100, 10, 1][decimals] as Int64
                let m = Int64.random(in: -Amount.maximumMicros...Amount.maximumMicros, using: &rng) / step * step
                micros.append(m)
            }
            let amounts = try micros.map { try Amount(micros: $0) }
            let exact = micros.reduce(Int128(0)) { $0 + Int128($1) }
            for _ in 0..<3 { #expect(Amount.sum(amounts.shuffled(using: &rng)).micros == exact) }
            for a in amounts {
                let text = a.description
                #expect(!text.contains("e") && !text.contains("E"), "\(text)")
                #expect(try Amount(text) == a, "\(text)")
                #expect(try JSONParser.parse(JSONWriter.string(.amount(a))) == .amount(a))
                let record = EventCodec.encode(
                    Event(
                        id: UUID(), origin: "phone", sequence: 1, hlc: HLC(rawValue: 1 << 20), at: Instant(milliseconds: 1), schema: 2,
                        payload: .progressRecorded(ProgressRecorded(goal: UUID(), amount: a, occurredAt: Instant(milliseconds: 1), day: Day(daysSinceEpoch: 0)))))
                guard case .progressRecorded(let p) = try EventCodec.decode(record).payload else {
                    Issue.record("not a progressRecorded")
                    continue
                }
                #expect(p.amount == a)
            }
        }
    }

    /// An amount whose double's shortest form is the amount is written as that double, as
    /// before; any other in millionths under a bit of its own, which an older ledger refuses.
    @Test func recordsKeepTheDoubleFormWhereItIsExactAndOtherwiseHoldMillionths() throws {
        func record(_ text: String) throws -> [UInt8] {
            EventCodec.encode(
                Event(
                    id: UUID(uuidString: "A0000000-0000-4000-8000-000000000001")!, origin: "phone", sequence: 1, hlc: HLC(rawValue: 1 << 20),
                    at: Instant(milliseconds: 1), schema: 2,
                    payload: .progressRecorded(ProgressRecorded(goal: UUID(), amount: try Amount(text)))))
        }
        // Presence byte (after the header and the event's fields): bit 0 the double, bit 5 millionths.
        let offset = 1 + 4 + 16 + 8 + 1 + 1 + 6 + 1 + 1
        for text in ["2.5", "0.000001", "9007199254.740993", "-999999999999", "123456.789012"] {
            #expect(try record(text)[offset] == 0b1, "\(text)")
        }
        for text in ["999999999999.999999", "9007199254.740991", "-123456789012.345678"] {
            #expect(try record(text)[offset] == 0b10_0000, "\(text)")
        }
    }

    static func fixture(_ name: String, in dir: TemporaryDirectory) throws -> String {
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/double-amounts/\(name)")
        let target = dir.path + "/" + name
        try FileManager.default.copyItem(atPath: source.path, toPath: target)
        return target
    }

    /// The stores of `Fixtures/double-amounts` were written when amounts were doubles (a −0,
    /// 0.000001, a value past 2^53 millionths among them): every record reads as its decimal
    /// and encodes back to the same bytes, so hashes and signatures hold.
    @Test func recordsWrittenAsDoublesReadAsTheirDecimalsAndKeepTheirBytes() throws {
        let dir = TemporaryDirectory()
        let phone = try LedgerStore.open(at: try Self.fixture("phone", in: dir))
        var amounts: [String] = []
        try phone.read { s in
            try s.visitRecords(missingFrom: [:]) { event, bytes throws(LedgerError) in
                #expect(EventCodec.encode(event) == Array(bytes), "\(event.id) does not encode back to its bytes")
                if case .progressRecorded(let p) = event.payload { amounts.append(p.amount?.description ?? "none") }
                if case .goalCreated(let g) = event.payload, let t = g.target { amounts.append("target " + t.description) }
                if case .goalEdited(let g) = event.payload, let t = g.target { amounts.append("target " + t.description) }
            }
        }
        #expect(
            amounts == [
                "target 9007199254.740993", "0.000001", "0", "0.1", "0.2", "-999999999999", "1000000000000", "123456.789012", "target 2.5",
                "target 0.000002", "0.000003",
            ])
        #expect(try phone.verify().isClean)
        let view = try phone.read { try $0.goal(UUID(uuidString: "5A1E0C2B-7D3F-4E8A-9B6C-0D1E2F3A4B5C")!, now: Instant(rfc3339: "2026-11-05T12:00:00Z")!) }
        #expect(view?.view.value?.description == "123458.089013")

        let old = try LedgerStore.open(at: try Self.fixture("old", in: dir))
        try old.read { s in
            try s.visitRecords(missingFrom: [:]) { event, bytes throws(LedgerError) in
                #expect(EventCodec.encode(event) == Array(bytes))
                if case .progressHistoryReplaced(let p) = event.payload {
                    #expect(p.entries.map { $0.amount?.description ?? "" } == ["0.000001", "0", "9007199254.740993"])
                }
            }
        }
        #expect(try old.verify().isClean)
        let history = try old.read { try $0.goal(UUID(uuidString: "3D2C1B0A-9F8E-4D7C-8B6A-5F4E3D2C1B0A")!, now: Instant(rfc3339: "2026-10-01T22:00:00Z")!) }
        #expect(history?.view.value?.description == "9007199254.740994", "before: 9007199254.740995")
    }

    /// The projection's form of an amount (its millionths without trailing decimal zeros):
    /// every amount reads back exactly, whole numbers below 8 take one byte, and a value of
    /// another form is refused, not trapped on.
    @Test func theProjectionsFormOfAnAmountReadsBackExactlyAndSmall() throws {
        var rng = SeededRandom(seed: 0xA5)
        var samples: [Int128] = [0, 1, -1, 10, 1_000_000, 4_000_000, -7_000_000, 2_500_000, 999_999, Int128(Amount.maximumMicros),
            -Int128(Amount.maximumMicros), 123_456_789_000_000]
        for _ in 0..<2000 {
            let digits = Int(rng.next() % 19)
            var m = Int128(rng.next() % 1_000_000_000_000_000_000) / Int128((0..<digits).reduce(1) { r, _ in r * 10 })
            m *= Int128((0..<Int(rng.next() % 7)).reduce(1) { r, _ in r * 10 })
            if m.magnitude <= UInt128(Amount.maximumMicros) { samples.append(rng.next() % 2 == 0 ? m : -m) }
        }
        for micros in samples {
            var w = ByteWriter()
            w.amount(Amount(unchecked: micros))
            let back = try w.bytes.withUnsafeBytes { b in
                var r = ByteReader(b)
                let a = try r.amount()
                #expect(r.isAtEnd)
                return a.micros
            }
            #expect(back == micros)
            if micros % 1_000_000 == 0, micros.magnitude < 8_000_000 { #expect(w.bytes.count == 1, "\(micros)") }
        }
        // A count of zeros over six; millionths that overflow once scaled; beyond ±10^18.
        for v: UInt64 in [7, 15, (UInt64(1) << 62) | 6, UInt64(2_000_000_000_000_000_002) << 3] {
            var w = ByteWriter()
            w.varint(v)
            #expect(throws: RecordDecodingError.self) {
                try w.bytes.withUnsafeBytes { b in
                    var r = ByteReader(b)
                    _ = try r.amount()
                }
            }
        }
    }
}
