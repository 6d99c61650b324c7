import Foundation
import Testing

@testable import GoalLedger

struct JSONParserTests {
    @Test func parsesNestedValuesAndKeepsKeyOrder() throws {
        let v = try JSONParser.parse(#"{"b":[1,2.5,-3e2,true,null],"a":{"x":"\u00e9\n\ud83d\ude00"}}"#)
        #expect(v["b"] == .array([.number(1), .number(2.5), .number(-300), .bool(true), .null]))
        #expect(v["a"]?["x"] == .string("é\n😀"))
        guard case .object(let m) = v else {
            Issue.record("not an object")
            return
        }
        #expect(m.map(\.0) == ["b", "a"])
    }

    @Test(arguments: [
        (#"{"a":1,"a":2}"#, "duplicate key"), ("[1,]", "unexpected character"), ("{\"a\":1", "unexpected end"),
        ("01", "unexpected text"), ("1e", "invalid number"), ("\"\\ud800\"", "unpaired surrogate"),
        ("{\"a\":tru}", "invalid literal"), ("\"a\u{01}\"", "control character"), ("", "unexpected end"),
    ])
    func refusesInvalidText(_ text: String, _ reason: String) {
        #expect(throws: JSONSyntaxError.self) { try JSONParser.parse(text) }
        do { _ = try JSONParser.parse(text) } catch { #expect(error.reason.contains(reason), "\(text): \(error)") }
    }

    @Test func refusesInvalidUTF8AndDeepNesting() {
        #expect(throws: JSONSyntaxError.self) { try JSONParser.parse([0x22, 0xC3, 0x28, 0x22]) }
        let deep = String(repeating: "[", count: 65) + String(repeating: "]", count: 65)
        #expect(throws: JSONSyntaxError.self) { try JSONParser.parse(deep) }
        let ok = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        #expect((try? JSONParser.parse(ok)) != nil)
    }

    /// The parser's fast paths (integers without text conversion, strings without escapes, keys
    /// checked by a linear search in small objects) give what the general paths give.
    @Test func fastPathsAgreeWithTheGeneralOnes() throws {
        var rng = SystemRandomNumberGenerator()
        for digits in 1...18 {
            for _ in 0..<20 {
                let text = (Bool.random(using: &rng) ? "-" : "") + String(UInt64.random(in: 1...9, using: &rng))
                    + String((1..<digits).map { _ in Character(String(Int.random(in: 0...9, using: &rng))) })
                // Past 15 digits an integer may not be exact: then it keeps its text, never rounded.
                let parsed = try JSONParser.parse(text)
                if case .decimal(let kept) = parsed {
                    #expect(kept == text && digits > 15 && Int64(Double(text)!) != Int64(text)!, "\(text)")
                } else {
                    #expect(parsed == .number(Double(text)!), "\(text)")
                }
            }
        }
        guard case .number(let zero) = try JSONParser.parse("-0") else { throw JSONSyntaxError(offset: 0, reason: "not a number") }
        #expect(zero == 0 && zero.sign == .minus)
        #expect(try JSONParser.parse(#""plain, then an escape \u00e9 and more""#) == .string("plain, then an escape é and more"))
        #expect(try JSONParser.parse(#""é and ☃ unescaped""#) == .string("é and ☃ unescaped"))
        // Duplicate keys are found in small objects and in large ones.
        let many = (0..<20).map { "\"k\($0)\":\($0)" }
        for duplicate in [3, 19] {
            let text = "{" + (many + ["\"k\(duplicate)\":0"]).joined(separator: ",") + "}"
            #expect(throws: JSONSyntaxError.self) { try JSONParser.parse(text) }
        }
        #expect(throws: JSONSyntaxError.self) { try JSONParser.parse(#"{"a":1,"b":2,"a":3}"#) }
        #expect(try JSONParser.parse("{" + many.joined(separator: ",") + "}")["k19"] == .number(19))
        // An invalid UTF-8 string is refused at the same offset by either path.
        var offsets: [Int] = []
        for bytes: [UInt8] in [[0x22, 0xC3, 0x28, 0x22], [0x22, 0xC3, 0x28, 0x5C, 0x6E, 0x22]] {
            do {
                _ = try JSONParser.parse(bytes)
                Issue.record("invalid UTF-8 accepted")
            } catch { offsets.append(error.offset - bytes.count) }
        }
        #expect(offsets == [0, 0])
    }

    @Test func writerEscapesAndPrintsWholeNumbersPlainly() throws {
        let v = JSONValue.object([("s", .string("a\"b\\\n\u{01}")), ("n", .number(6)), ("f", .number(2.5)), ("neg", .number(-0.125))])
        #expect(try JSONWriter.string(v) == #"{"s":"a\"b\\\n\u0001","n":6,"f":2.5,"neg":-0.125}"#)
        #expect(try JSONParser.parse(try JSONWriter.string(v)) == v)
    }
}

struct UUIDParsingTests {
    /// `UUID.parse` reads canonical ids (either case) as Foundation's `UUID(uuidString:)` does,
    /// and refuses every other text. Foundation's scanner also takes a few malformed texts (a
    /// space or a sign inside a group: "…-EE 5FDFC592D" reads as some other id); those are
    /// refused here.
    @Test func parseAgreesWithFoundation() {
        var rng = SystemRandomNumberGenerator()
        let alphabet = Array("0123456789abcdefABCDEFgG-{} xz\u{e9}".unicodeScalars)
        var texts = ["", "00000000-0000-0000-0000-000000000000", "{E621E1F8-C36C-495A-93FC-0C247A3E6E5F}"]
        for _ in 0..<400 {
            let id = UUID()
            var chars = Array((Bool.random(using: &rng) ? id.uuidString : id.uuidString.lowercased()).unicodeScalars)
            texts.append(String(String.UnicodeScalarView(chars)))
            switch Int.random(in: 0..<3, using: &rng) {
            case 0: chars[Int.random(in: 0..<chars.count, using: &rng)] = alphabet.randomElement(using: &rng)!
            case 1: chars.remove(at: Int.random(in: 0..<chars.count, using: &rng))
            default: chars.insert(alphabet.randomElement(using: &rng)!, at: Int.random(in: 0...chars.count, using: &rng))
            }
            texts.append(String(String.UnicodeScalarView(chars)))
        }
        let canonical = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/
        var refused = 0
        for text in texts {
            if text.wholeMatch(of: canonical) != nil {
                #expect(UUID.parse(text) != nil && UUID.parse(text) == UUID(uuidString: text), "[\(text)]")
            } else {
                #expect(UUID.parse(text) == nil, "[\(text)]")
                refused += 1
            }
        }
        #expect(refused > 200)
    }
}

struct TimeTests {
    @Test func parsesRFC3339WithOffsetsAndFractions() {
        #expect(instant("2026-11-02T07:00:00Z").milliseconds == 1_793_602_800_000)
        #expect(instant("2026-11-02T08:00:00+01:00") == instant("2026-11-02T07:00:00Z"))
        #expect(instant("2026-11-02T07:00:00.25Z").milliseconds == 1_793_602_800_250)
        #expect(instant("2026-11-02T07:00:00.123456789Z").rfc3339 == "2026-11-02T07:00:00.123Z")
        #expect(instant("1969-12-31T23:59:59.5Z").rfc3339 == "1969-12-31T23:59:59.500Z")
    }

    /// The forms written straight into a byte buffer are the bytes of the strings.
    @Test func writtenFormsAreTheStringsBytes() {
        for ms: Int64 in [0, 1, 999, 1_000, -1, -500, 1_793_602_800_250, 253_402_300_799_999, 253_402_300_800_000, -62_167_219_200_001] {
            var out: [UInt8] = [0x2A]
            Instant(milliseconds: ms).writeRFC3339(into: &out)
            #expect(out == [0x2A] + Array(Instant(milliseconds: ms).rfc3339.utf8), "\(ms)")
        }
        #expect(Instant(milliseconds: 253_402_300_799_999).rfc3339 == "9999-12-31T23:59:59.999Z")
        #expect(Instant(milliseconds: 253_402_300_800_000).rfc3339 == "10000-01-01T00:00:00Z")
        #expect(Instant(milliseconds: -62_167_219_200_000).rfc3339 == "0000-01-01T00:00:00Z")
        // Past the days an Int32 holds (a record may say so: `crash-instant-past-int32-days` of
        // the record fuzz target), a form for messages rather than a trap.
        #expect(Instant(milliseconds: .max).rfc3339 == "292278994-08-17T07:12:55Z")
        #expect(Instant(milliseconds: .min).rfc3339 == "-292275055-05-16T16:47:04Z")
        #expect(Instant(milliseconds: .max).day(in: TimeZone(identifier: "UTC")!) == Day(daysSinceEpoch: .max))
        #expect(Instant(milliseconds: .min).day(in: TimeZone(identifier: "UTC")!) == Day(daysSinceEpoch: .min))
        for _ in 0..<50 {
            let id = UUID()
            var out: [UInt8] = [0x2A]
            id.writeUpper(into: &out)
            #expect(out == [0x2A] + Array(id.uuidString.utf8))
            #expect(id.upperString == id.uuidString)
        }
    }

    @Test(arguments: [
        "2026-02-30T00:00:00Z", "2026-11-02 07:00:00Z", "2026-11-02T24:00:00Z", "2026-11-02T07:00:00",
        "2026-11-02T07:00:60Z", "2026-11-02T07:00:00+1:00", "2026-11-02T07:00:00.Z", "yesterday",
    ])
    func refusesInvalidInstants(_ text: String) {
        #expect(Instant(rfc3339: text) == nil)
    }

    @Test func daysRoundTripAndKnowLeapYears() {
        #expect(Day(iso: "2028-02-29") != nil)
        #expect(Day(iso: "2027-02-29") == nil)
        #expect(Day(iso: "1900-02-29") == nil)
        #expect(Day(iso: "2000-02-29") != nil)
        #expect(Day(iso: "2026-13-01") == nil)
        #expect(Day(iso: "2026-1-01") == nil)
        for d in stride(from: Int32(-719_000), to: 2_900_000, by: 997) {
            let day = Day(daysSinceEpoch: d)
            #expect(Day(iso: day.description) == day)
            let (y, m, dd) = day.components
            if y >= 0 { #expect(day.description == String(format: "%04d-%02d-%02d", y, m, dd)) }
        }
        #expect(day("2026-11-30").weekday == 2)  // a Monday
        #expect(day("1970-01-01").weekday == 5)  // a Thursday
    }

    @Test func localDayFollowsTheTimeZone() {
        let late = instant("2026-11-02T23:30:00Z")
        #expect(late.day(in: TimeZone(identifier: "UTC")!) == day("2026-11-02"))
        #expect(late.day(in: TimeZone(identifier: "Europe/Berlin")!) == day("2026-11-03"))
        #expect(instant("2026-11-03T03:30:00Z").day(in: TimeZone(identifier: "America/New_York")!) == day("2026-11-02"))
    }
}

struct UUIDFormTests {
    @Test func upperStringMatchesFoundationAndSortsLikeIt() {
        var rng = SeededRandom(seed: 5)
        let ids = (0..<500).map { _ in rng.uuid() }
        for id in ids { #expect(id.upperString == id.uuidString) }
        #expect(ids.sorted(by: UUID.precedes).map(\.uuidString) == ids.map(\.uuidString).sorted())
    }
}

struct ChecksumTests {
    /// The one-call SHA-256 (the CPU's SHA extensions where present) equals libsodium's on
    /// every length across the block and padding boundaries, and on the standard vectors.
    @Test func oneCallSHA256MatchesLibsodium() {
        func oneCall(_ bytes: [UInt8], portable: Bool = false) -> [UInt8] {
            var out = [UInt8](repeating: 0, count: 32)
            out.withUnsafeMutableBytes { o in
                bytes.withUnsafeBytes { portable ? SHA256.portableHash($0, into: o) : SHA256.hash($0, into: o) }
            }
            return out
        }
        var rng = SeededRandom(seed: 256)
        for length in Array(0...300) + [1_000, 4_096, 65_537] {
            let bytes = (0..<length).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            #expect(oneCall(bytes) == oneCall(bytes, portable: true), "length \(length)")
        }
        #expect(SHA256.hexString(oneCall(Array("abc".utf8))) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(
            SHA256.hexString(oneCall(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)))
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        // Which path ran is reported, so a run on a CPU without the extensions is visible.
        print("SHA-256 one-call path: \(SHA256.usesHardware ? "CPU SHA extensions" : "libsodium")")
    }

    /// Two messages hashed at once give each its own SHA-256 (libsodium's), of equal or
    /// unequal lengths in blocks, across the padding boundaries.
    @Test func pairedSHA256MatchesLibsodium() {
        func portable(_ bytes: [UInt8]) -> [UInt8] {
            var out = [UInt8](repeating: 0, count: 32)
            out.withUnsafeMutableBytes { o in bytes.withUnsafeBytes { SHA256.portableHash($0, into: o) } }
            return out
        }
        var rng = SeededRandom(seed: 257)
        let lengths = Array(0...130) + [183, 191, 192, 250, 256, 1_000]
        for la in lengths {
            for lb in [0, 1, 55, 56, 63, 64, 81, 119, 120, 128, la, la + 1] {
                let a = (0..<la).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
                let b = (0..<lb).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
                var outA = [UInt8](repeating: 0, count: 32)
                var outB = [UInt8](repeating: 0, count: 32)
                outA.withUnsafeMutableBytes { oa in
                    outB.withUnsafeMutableBytes { ob in
                        a.withUnsafeBytes { pa in b.withUnsafeBytes { pb in SHA256.hashPair(pa, pb, into: oa, ob) } }
                    }
                }
                #expect(outA == portable(a), "lengths \(la), \(lb): the first")
                #expect(outB == portable(b), "lengths \(la), \(lb): the second")
            }
        }
    }

    @Test func knownVectors() {
        #expect(Array("123456789".utf8).withUnsafeBytes { CRC32C.checksum($0) } == 0xE306_9283)
        #expect(SHA256.hex("abc".utf8) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(SHA256.hex([UInt8]()) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        let million = [UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)
        #expect(SHA256.hex(million) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
        // Fed in uneven pieces, the hash is the same.
        var pieces = SHA256()
        var offset = 0
        for size in [1, 63, 64, 65, 1000, 7] + Array(repeating: 997, count: 1000) where offset < million.count {
            let end = min(offset + size, million.count)
            pieces.update(million[offset..<end])
            offset = end
        }
        pieces.update(million[offset...])
        #expect(SHA256.hexString(pieces.finalize()) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    /// The CPU path (where the machine has one) and the portable path agree on every length and
    /// alignment, including the 1-to-7-byte tails the instruction path handles separately.
    @Test func theHardwareAndPortableCRCsAgree() {
        var rng = SeededRandom(seed: 0xC3C)
        let bytes = (0..<4096).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
        bytes.withUnsafeBytes { all in
            for start in 0..<9 {
                for length in [0, 1, 7, 8, 9, 63, 64, 100, 1000, 4000] where start + length <= all.count {
                    let slice = UnsafeRawBufferPointer(rebasing: all[start..<(start + length)])
                    #expect(CRC32C.checksum(slice) == CRC32C.portableChecksum(slice), "start \(start), length \(length)")
                }
            }
        }
        #expect(Array("123456789".utf8).withUnsafeBytes { CRC32C.portableChecksum($0) } == 0xE306_9283)
    }
}

struct LedgerErrorTests {
    @Test func aCodeMatchesItsErrorsInACatchClause() throws {
        let t = try TemporaryStore()
        func kind(_ body: () throws -> Void) -> String {
            do {
                try body()
                return "none"
            } catch LedgerError.Code.invalidInput {
                return "invalid input"
            } catch LedgerError.Code.invalidArgument {
                return "invalid argument"
            } catch {
                return "other"
            }
        }
        #expect(kind { try t.store.append([try draft(#"{"type":"tagAdded","goal":"0B5E2A8C-6C1F-4E0B-9C52-8D0C6B0E51A1","tag":"x"}"#)], now: instant("2026-11-05T12:00:00Z")) } == "invalid input")
        #expect(kind { _ = try LedgerStore.create(at: t.directory.path + "/x", device: "Not A Name") } == "invalid argument")
        #expect(kind { throw CocoaError(.fileNoSuchFile) } == "other")
    }
}

struct GoalReadModelTests {
    @Test func aGoalReadsAsPlainTypedValues() throws {
        let t = try TemporaryStore()
        let id = "0B5E2A8C-6C1F-4E0B-9C52-8D0C6B0E51A1"
        let now = instant("2026-11-05T12:00:00Z")
        try t.store.append(
            [
                try draft(
                    #"{"type":"goalCreated","goal":"\#(id)","title":"Run","cadence":"weekly","progress":{"kind":"measurable","target":20,"unit":"km"},"reminder":{"hour":7},"tags":["e\u0301",  "b"]}"#
                ),
                try draft(#"{"type":"progressRecorded","goal":"\#(id)","amount":5}"#),
            ], now: now)
        let goal = try #require(try t.store.goal(UUID(uuidString: id)!))
        #expect(goal.title == "Run" && goal.cadence == .weekly && goal.progressKind == .measurable)
        #expect(try goal.target?.description == "20" && goal.unit == "km" && goal.reminder == ReminderTime(hour: 7, minute: 0))
        #expect(goal.tags == ["b", "\u{E9}"] && !goal.isDeleted && goal.entries.map(\.amount) == [5])
        #expect(try t.store.goal(UUID()) == nil)
    }
}

struct EventIDTests {
    @Test func appendedEventIdsAreDistinctVersion7UUIDsInClockOrder() {
        let start = instant("2026-11-05T12:00:00Z")
        // 100,000 readings: 100 milliseconds, a thousand counter values in each.
        let clocks = (0..<100_000).map { i in HLC(milliseconds: start.milliseconds + Int64(i / 1_000), counter: UInt16(i % 1_000)) }
        let ids = clocks.map(EventIDs.next(clock:))
        #expect(Set(ids).count == ids.count)
        #expect(ids.allSatisfy { $0.uuid.6 >> 4 == 7 && $0.uuid.8 >> 6 == 2 })
        // The first 48 bits are the reading's milliseconds; the ids sort as the readings do.
        let bytes = ids.map { id in withUnsafeBytes(of: id.uuid) { Array($0) } }
        #expect(bytes.allSatisfy { $0.prefix(6).reduce(Int64(0)) { $0 << 8 | Int64($1) } >= start.milliseconds })
        #expect(bytes[0].prefix(6).reduce(Int64(0)) { $0 << 8 | Int64($1) } == start.milliseconds)
        #expect(zip(bytes, bytes.dropFirst()).allSatisfy { $0.lexicographicallyPrecedes($1) })
        // One reading twice: two ids, in its place.
        let twice = [EventIDs.next(clock: clocks[7]), EventIDs.next(clock: clocks[7])]
        #expect(twice[0] != twice[1])
        // The largest counter and a reading past 48 bits of milliseconds keep the version and variant.
        for clock in [HLC(milliseconds: start.milliseconds, counter: .max), HLC(rawValue: .max)] {
            let id = EventIDs.next(clock: clock)
            #expect(id.uuid.6 >> 4 == 7 && id.uuid.8 >> 6 == 2)
        }
    }

    /// An app's appends without ids take the library's, in the order of their writes: the id
    /// index then grows at one end.
    @Test func eventsAppendedWithoutIdsHaveIdsOfTheirWrite() throws {
        let t = try TemporaryStore()
        let now = instant("2026-11-05T12:00:00Z")
        var results: [AppendResult] = []
        for k in 0..<3 {
            let later = Instant(milliseconds: now.milliseconds + Int64(k) * 1_000)
            results += try t.store.append([try draft(#"{"type":"goalCreated","goal":"\#(UUID())","title":"G\#(k)"}"#)], now: later)
        }
        let bytes = results.map { r in withUnsafeBytes(of: r.id.uuid) { Array($0) } }
        #expect(results.allSatisfy { $0.id.uuid.6 >> 4 == 7 })
        #expect(bytes[0].lexicographicallyPrecedes(bytes[1]) && bytes[1].lexicographicallyPrecedes(bytes[2]))
    }
}

/// Counts a peer's numbers make are summed without overflowing: a hub that says it is ahead
/// by `Int.max` events on two origins asks for room for `Int.max`, not for a crash.
struct SaturatingSumTests {
    @Test func sumsStopAtTheLargestIntAndCountNothingBelowZero() {
        #expect([1, 2, 3].saturatingSum { $0 } == 6)
        #expect([Int]().saturatingSum { $0 } == 0)
        #expect([Int.max, 1].saturatingSum { $0 } == .max)
        #expect([Int.max - 1, 1].saturatingSum { $0 } == .max)
        #expect([UInt64.max, UInt64.max].saturatingSum { Int(clamping: $0) } == .max)
        #expect([5, -3].saturatingSum { $0 } == 5)
    }
}
