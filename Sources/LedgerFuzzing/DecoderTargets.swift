import Foundation
import GoalLedger
import LedgerFileCenter
import LedgerScenarios
import RequestSigning
import Sodium

/// `ledger append`'s reading of its input: each non-blank line (a line feed ends it, a carriage
/// return before it is dropped) is JSON, then an event draft through the gate, under either
/// schema. A draft that passes becomes an event with a fixed envelope, whose record must read
/// back as the same event.
enum EventLineTarget {
    static func run(_ bytes: UnsafeRawBufferPointer) {
        var start = 0
        while start <= bytes.count {
            var end = start
            while end < bytes.count, bytes[end] != UInt8(ascii: "\n") { end += 1 }
            var last = end
            if last > start, bytes[last - 1] == UInt8(ascii: "\r") { last -= 1 }
            line(bytes[start..<last])
            start = end + 1
        }
    }

    /// A line read as `append` reads it (`EventDraft(jsonText:)`), which must give what its
    /// JSON value gives (`EventDraft(json:)`): the same draft, or the same error.
    static func line(_ bytes: Slice<UnsafeRawBufferPointer>) {
        if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { return }
        let text = Array(bytes)
        let value = Result { () throws(JSONSyntaxError) in try JSONParser.parse(bytes) }
        for schema in 1...LedgerStore.currentSchema {
            let viaValue = Result { () throws -> EventDraft in try EventDraft(json: value.get(), schema: schema) }
            let direct = Result { try EventDraft(jsonText: text, schema: schema) }
            switch (viaValue, direct) {
            case (.success(let a), .success(let b)) where a == b: break
            case (.failure(let a), .failure(let b)) where "\(a)" == "\(b)": break
            default: violated("a line read from its text gives \(direct), from its JSON value \(viaValue)")
            }
            guard case .success(let draft) = viaValue else { continue }
            let event = Event(
                id: draft.id ?? UUID(uuid: (1, 2, 3, 4, 5, 6, 0x40, 8, 0x80, 10, 11, 12, 13, 14, 15, 16)), origin: "phone", sequence: 1,
                hlc: HLC(milliseconds: 1_780_000_000_000, counter: 0), at: draft.at ?? Instant(milliseconds: 1_780_000_000_000),
                schema: UInt8(schema), payload: draft.payload)
            RecordTarget.roundTrip(event, source: "the event of a draft")
        }
    }
}

/// The binary record decoder: the input as it is (its checksum checked), and the input with its
/// checksum made right, so that the fuzzer reaches past it. A record that decodes encodes
/// again to a record that decodes to an equal event, whose JSON form can be written; the
/// decoding a fold uses (without the chain fields) accepts exactly the same records.
enum RecordTarget {
    static func run(_ bytes: UnsafeRawBufferPointer) {
        decodeBothWays(bytes)
        guard bytes.count >= 5 else { return }
        var fixed = Array(bytes)
        fixChecksum(&fixed)
        fixed.withUnsafeBytes { decodeBothWays($0) }
    }

    /// The record decoded with and without its chain fields: both accept it or both refuse it,
    /// and they differ only in those fields.
    static func decodeBothWays(_ bytes: UnsafeRawBufferPointer) {
        let full = try? EventCodec.decode(bytes)
        let folded = try? EventCodec.decode(bytes, keepingChain: false)
        guard var full else {
            if folded != nil { violated("a record refused with its chain fields is accepted without them") }
            return
        }
        check(full)
        guard let folded else { violated("a record accepted with its chain fields is refused without them") }
        full.previousHash = nil
        full.signature = nil
        full.signer = nil
        if folded != full, !hasNaN(full) { violated("a record decodes to another event without its chain fields") }
    }

    /// Writes the record's CRC-32C over what follows it, as a ledger writes it.
    static func fixChecksum(_ record: inout [UInt8]) {
        guard record.count >= 5 else { return }
        let crc = record.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[5...])) }
        for i in 0..<4 { record[1 + i] = UInt8(truncatingIfNeeded: crc >> UInt32(8 * i)) }
    }

    static func check(_ event: Event) {
        roundTrip(event, source: "a decoded record")
        // What the readers of a stored event do with it: the gate, its JSON form.
        _ = try? event.checkWellFormed()
        _ = try? JSONWriter.string(event.json(position: 1))
        _ = event.key
    }

    /// `event` encoded, decoded and encoded again: the same bytes both times, and an equal event
    /// (unless a value in it is not equal to itself, a NaN kept as it was stored).
    static func roundTrip(_ event: Event, source: String) {
        let record = EventCodec.encode(event)
        let back: Event
        do {
            back = try EventCodec.decode(record)
        } catch {
            violated("\(source) encodes to a record that does not decode: \(error)")
        }
        let again = EventCodec.encode(back)
        guard again == record else { violated("\(source) encodes differently after a round trip") }
        if back != event, !hasNaN(event) { violated("\(source) decodes to another event after a round trip: \(event) became \(back)") }
    }
}

/// Whether a value holds a NaN anywhere (a legacy amount or target kept as it was stored),
/// which makes it unequal to itself.
func hasNaN(_ value: Any) -> Bool {
    if let d = value as? Double { return d.isNaN }
    return Mirror(reflecting: value).children.contains { hasNaN($0.value) }
}

/// A change set (with its trailer's hash made right as well, so that the records are read) and
/// a sync state: each that decodes encodes to bytes that decode to the same value.
enum ChangeSetTarget {
    static func run(_ bytes: UnsafeRawBufferPointer) {
        let input = Array(bytes)
        changeSet(input)
        syncState(input)
        // The change set as a relay would send it after damage: its hash over what it holds,
        // and each record's checksum right.
        if input.count >= 8 + 1 + 16 + 8 + 4 + 32 {
            var fixed = input
            fixTrailer(&fixed)
            changeSet(fixed)
        }
    }

    /// Makes each whole record's checksum right, then the trailer ("END!" and the hash of what
    /// precedes it). `bytes` holds at least a header and a trailer.
    static func fixTrailer(_ bytes: inout [UInt8]) {
        fixRecordChecksums(&bytes)
        let bodyEnd = bytes.count - 32
        var hash = Sodium.SHA256Hash()
        bytes.withUnsafeBytes { hash.update(UnsafeRawBufferPointer(rebasing: $0[..<(bodyEnd - 4)])) }
        bytes.replaceSubrange((bodyEnd - 4)..<bodyEnd, with: Array("END!".utf8))
        bytes.replaceSubrange(bodyEnd..., with: hash.finalize())
    }

    /// Walks the records as the decoder does and fixes the checksum of each that is whole.
    static func fixRecordChecksums(_ bytes: inout [UInt8]) {
        var index = 8 + 1 + 16 + 8
        let end = bytes.count - 36
        while index < end {
            var length: UInt64 = 0
            var shift: UInt64 = 0
            while index < end, shift < 64 {
                let b = bytes[index]
                index += 1
                length |= UInt64(b & 0x7F) << shift
                if b & 0x80 == 0 { break }
                shift += 7
            }
            guard length >= 5, length <= UInt64(end - index) else { return }
            var record = Array(bytes[index..<index + Int(length)])
            RecordTarget.fixChecksum(&record)
            bytes.replaceSubrange(index..<index + Int(length), with: record)
            index += Int(length)
        }
    }

    static func changeSet(_ bytes: [UInt8]) {
        let set = try? ChangeSet(decoding: bytes)
        pagedRead(bytes, set)
        guard let set else { return }
        let encoded = set.encoded()
        guard let back = try? ChangeSet(decoding: encoded) else { violated("a decoded change set encodes to bytes that do not decode") }
        guard back.records == set.records, back.ledger == set.ledger, back.encoded() == encoded else {
            violated("a change set reads back otherwise")
        }
        for event in set.events { RecordTarget.check(event) }
    }

    /// An import's read of the file a page at a time (`ExportFile.Opened`, each origin's records
    /// through `ExportFile.Source`) takes the files the whole decode takes, and gives each
    /// origin's records as the whole decode holds them, in sequence order.
    static func pagedRead(_ bytes: [UInt8], _ set: ChangeSet?) {
        var read: [String: [[UInt8]]]? = [:]
        if let opened = try? ExportFile.Opened(bytes: bytes, name: "input") {
            var source = ExportFile.Source(opened)
            for origin in opened.origins.keys {
                guard let chunk = try? source.read(origin, count: 64), let rest = try? source.read(origin, count: .max) else {
                    read = nil
                    break
                }
                guard (chunk.events + rest.events).allSatisfy({ $0.origin == origin }), rest.ended || opened.origins[origin]!.count == 0 else {
                    violated("a paged read gives another origin's records, or does not end")
                }
                read?[origin] = chunk.records + rest.records
            }
        } else {
            read = nil
        }
        guard (read != nil) == (set != nil) else {
            violated(set == nil ? "a paged read takes a file the whole decode refuses" : "a paged read refuses a file the whole decode takes")
        }
        guard let set, let read else { return }
        var whole: [String: [(UInt64, [UInt8])]] = [:]
        for (event, record) in zip(set.events, set.records) { whole[event.origin, default: []].append((event.sequence, record)) }
        guard Set(read.keys) == Set(whole.keys),
            whole.allSatisfy({ origin, list in list.sorted { $0.0 < $1.0 }.map(\.1) == read[origin]! })
        else { violated("a paged read gives the records otherwise than the whole decode") }
    }

    static func syncState(_ bytes: [UInt8]) {
        guard let state = try? SyncState(decoding: bytes) else { return }
        guard let back = try? SyncState(decoding: state.encoded()) else { violated("a decoded sync state encodes to bytes that do not decode") }
        guard back == state else { violated("a sync state reads back otherwise") }
    }
}

/// HTTP Message Signatures as the service reads them. The input is lines: Signature-Input,
/// Signature, Content-Digest, then the body. Each field parses as a dictionary whose canonical
/// form parses to itself; the signature is verified with a fixed key; a request built of the
/// lines and signed with that key verifies.
enum SignatureTarget {
    static let key = SigningKey(seed: [UInt8](repeating: 7, count: 32))!

    static func run(_ bytes: UnsafeRawBufferPointer) {
        var lines: [String] = []
        var rest = bytes[...]
        for _ in 0..<3 {
            let end = rest.firstIndex(of: UInt8(ascii: "\n")) ?? rest.endIndex
            lines.append(String(decoding: rest[rest.startIndex..<end], as: UTF8.self))
            rest = end == rest.endIndex ? rest[end...] : rest[(end + 1)...]
        }
        let body = Array(rest)
        for line in lines { canonical(line) }

        _ = ContentDigest.matches(lines[2], body: body)
        let request = SignedRequestParts(
            method: "POST", target: "/v1/ledgers/x/push?q=1", authority: "hub.example",
            headers: [
                ("signature-input", lines[0]), ("signature", lines[1]), ("content-digest", lines[2]), ("ledger", "x"), ("host", "h"),
            ], body: body)
        for required in [RequestSignature.defaultComponents, []] {
            _ = try? RequestSignature.verify(request, required: required) { _ in key.publicKey }
            _ = try? RequestSignature.verify(request, label: "sig1", required: required) { _ in nil }
        }

        // Signed by the key over components named by the first line: it verifies.
        let components = lines[0].split(separator: " ", omittingEmptySubsequences: true).prefix(8).map(String.init)
        let unsigned = SignedRequestParts(
            method: "POST", target: "/v1/ledgers/x/push?q=1", authority: "hub.example",
            headers: [("ledger", lines[1]), ("content-digest", ContentDigest.header(for: body))], body: body)
        for covered in [RequestSignature.defaultComponents, components] {
            guard
                let added = try? RequestSignature.sign(
                    unsigned, components: covered, key: key, keyID: lines[1], created: 1_780_000_000, nonce: lines[2])
            else { continue }
            let signed = unsigned.adding(added)
            do {
                let verified = try RequestSignature.verify(signed, required: covered) { _ in key.publicKey }
                guard verified.components == covered, verified.keyID == lines[1], verified.nonce == lines[2] else {
                    violated("a signed request verifies with other parameters")
                }
            } catch {
                violated("a request signed over \(covered) does not verify: \(error)")
            }
        }
    }

    /// A field that parses has one canonical form, which parses to itself.
    static func canonical(_ text: String) {
        guard let once = try? StructuredFieldCanonical.dictionary(text) else { return }
        guard let twice = try? StructuredFieldCanonical.dictionary(once) else {
            violated("the canonical form of a field does not parse: \(once.debugDescription)")
        }
        guard once == twice else { violated("a field's canonical form changes when read again: \(once.debugDescription)") }
    }
}

/// A scenario file, as `ledger scenario run` reads it (without running it).
enum ScenarioTarget {
    static func run(_ bytes: UnsafeRawBufferPointer) {
        guard let json = try? JSONParser.parse(bytes[...]) else { return }
        guard let scenario = try? Scenario(json: json, name: "fuzz") else { return }
        _ = scenario.steps.count
    }
}

/// The notification center file: one that reads writes a JSON form that reads back to the same
/// center; time passing over it (one-time requests firing) never traps.
enum CenterFileTarget {
    static func run(_ bytes: UnsafeRawBufferPointer) {
        guard var file = try? NotificationCenterFile.decode(Array(bytes), path: "center.json", defaultCapacity: 64) else { return }
        guard let text = try? JSONWriter.string(file.json) else { return }
        guard let back = try? NotificationCenterFile.decode(Array(text.utf8), path: "center.json", defaultCapacity: 64) else {
            violated("a center's JSON form does not read back: \(text)")
        }
        guard let again = try? JSONWriter.string(back.json), again == text else {
            violated("a center's JSON form reads back otherwise: \(text)")
        }
        for zone in ["UTC", "Pacific/Kiritimati", "America/St_Johns"] {
            var copy = file
            copy.fire(until: Instant(milliseconds: 1_780_000_000_000), timeZone: TimeZone(identifier: zone)!)
        }
        file.fire(until: Instant(milliseconds: Int64.max), timeZone: TimeZone(identifier: "UTC")!)
    }
}

enum RelayTokenTarget {
    static func run(_ bytes: UnsafeRawBufferPointer) {
        guard let token = try? JSONDecoder().decode(RelayToken.self, from: Data(bytes)) else { return }
        guard let text = try? JSONEncoder().encode(token) else { violated("a relay token does not encode: \(token)") }
        guard let back = try? JSONDecoder().decode(RelayToken.self, from: text), back == token else {
            violated("a relay token's form reads back otherwise: \(String(decoding: text, as: UTF8.self))")
        }
        guard (try? token.merging(token)) == token else { violated("a relay token merged with itself changed: \(token)") }
        for origin in token.marks.keys where token.mark(of: origin) == 0 { violated("a relay token keeps a zero mark for \(origin)") }
        let other = RelayToken(ledger: UUID(uuid: (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16)))
        if token.ledger != other.ledger, (try? token.merging(other)) != nil { violated("tokens of two ledgers merged") }
    }
}

/// The readers of the store's own rows (`StoredRowCheck`): a broken invariant is a finding.
enum StoredRowTarget {
    static func run(_ bytes: UnsafeRawBufferPointer) {
        if let broken = StoredRowCheck.run(bytes) { violated(broken) }
    }
}

/// A store's data file as a damaged disk or a copied store may hold it, written to a directory
/// of its own and read without LMDB: the checks every open makes before LMDB maps the file,
/// the page walk of `verify` (`LedgerStore.checkPages`), the map of pages in use, and the
/// salvage of `recover`. A file the page walk finds no damage in must pass the open's checks.
enum DataFileTarget {
    nonisolated(unsafe) static var directory: String?

    static func run(_ bytes: UnsafeRawBufferPointer) {
        let dir = directory ?? {
            let d = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-fuzz-data-file-\(getpid())").path
            try? FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: true)
            directory = d
            return d
        }()
        guard FileManager.default.createFile(atPath: dir + "/data.mdb", contents: Data(bytes)) else { violated("cannot write \(dir)/data.mdb") }
        let damage = try? LedgerStore.checkPages(at: dir)
        let opens = (try? LedgerStore.checkBeforeOpening(at: dir)) != nil
        if let damage, damage.isEmpty, !opens { violated("the page walk found no damage, but the open's checks refuse the file") }
        _ = try? LedgerStore.pagesInUse(at: dir)
        _ = try? LedgerStore.salvage(at: dir)
        // No input is left behind (the directory, empty, is reused by the next).
        try? FileManager.default.removeItem(atPath: dir + "/data.mdb")
    }
}
