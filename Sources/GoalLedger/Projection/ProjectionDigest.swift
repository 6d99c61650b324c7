import Foundation

/// The projection's digest: a hash of the facts that does not depend on the order events came
/// in, built from parts a store keeps up to date as events are folded (see
/// `docs/storage-and-guarantees.md`, "The digest", which states it byte by byte):
///
/// - an entry's hash is SHA-256(`entryPrefix` · the entry's binary form, `writeDigestForm`);
/// - a goal's entry sum is the sum of its live entries' hashes, each read as a 256-bit
///   big-endian integer, modulo 2^256;
/// - a goal's hash is SHA-256(`goalPrefix` · SHA-256(the goal's canonical JSON without its
///   `entries` member) · its entry sum as 32 big-endian bytes);
/// - the digest is SHA-256(`ledgerPrefix` · the sum of the created goals' hashes modulo 2^256
///   as 32 big-endian bytes · the number of created goals as 8 big-endian bytes), in lowercase
///   hex.
///
/// An entry added adds its hash to its goal's sum and one removed subtracts it; a change to a
/// goal's other facts hashes only those. The sums make the digest cheap to maintain, not hard
/// to forge: it tells honest stores that diverged apart, and the signatures guard against
/// forgery.
enum ProjectionDigest {
    /// The construction's version, which its prefixes name. 2: an entry is hashed in a binary
    /// form (version 1 hashed its canonical JSON).
    static let version = 2
    /// Domain-separation prefixes (ASCII), one per kind of hash.
    static let entryPrefix = Array("goal-ledger.digest.2.entry:".utf8)
    static let goalPrefix = Array("goal-ledger.digest.2.goal:".utf8)
    static let ledgerPrefix = Array("goal-ledger.digest.2.ledger:".utf8)

    /// The hash of one entry, as a term of its goal's entry sum.
    static func entryHash(_ e: ProgressEntry) -> DigestSum {
        var device = e.device
        return device.withUTF8 { name in
            // The prefix, an entry's fixed fields and a device name of up to 64 bytes (what a
            // device name may be) fit on the stack: no array grown field by field. Only a
            // longer name (a damaged or hostile record's) takes room on the heap.
            withUnsafeTemporaryAllocation(byteCount: max(entryMessageSize(e, deviceBytes: name.count), Self.entryStackBytes), alignment: 8) {
                raw in
                let count = writeEntryMessage(e, device: name, into: raw)
                return DigestSum(sha256: UnsafeRawBufferPointer(rebasing: raw[..<count]))
            }
        }
    }

    /// Room on the stack for an entry's hashed bytes.
    private static let entryStackBytes = 192

    /// The length of the message an entry's hash is taken of, for a device name of `deviceBytes`.
    private static func entryMessageSize(_ e: ProgressEntry, deviceBytes: Int) -> Int {
        entryPrefix.count + e.digestFormSize(deviceBytes: deviceBytes)
    }

    /// Writes the message an entry's hash is taken of, `entryPrefix` and `e`'s binary form (its
    /// device name given as `name`, its UTF-8), at the start of `out`, which has room for
    /// `entryMessageSize`; how many bytes.
    private static func writeEntryMessage(
        _ e: ProgressEntry, device name: UnsafeBufferPointer<UInt8>, into out: UnsafeMutableRawBufferPointer
    ) -> Int {
        entryPrefix.withUnsafeBytes { out.copyMemory(from: $0) }
        return entryPrefix.count + e.writeDigestForm(device: name, into: UnsafeMutableRawBufferPointer(rebasing: out[entryPrefix.count...]))
    }

    /// `writeEntryMessage` into `buffer`, grown when short (reused entry after entry).
    fileprivate static func writeEntryMessage(_ e: ProgressEntry, into buffer: inout [UInt8]) -> Int {
        var device = e.device
        return device.withUTF8 { name in
            let size = entryMessageSize(e, deviceBytes: name.count)
            if buffer.count < size { buffer += repeatElement(0, count: max(size, entryStackBytes) - buffer.count) }
            return buffer.withUnsafeMutableBytes { writeEntryMessage(e, device: name, into: $0) }
        }
    }

    /// SHA-256 of the goal's canonical JSON without its entries: what a change to a register,
    /// a tag or the deletion flag changes.
    static func headerHash(_ g: GoalState) throws(LedgerError) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        try g.writeHeaderJSON(into: &out)
        var h = SHA256()
        h.update(out)
        return h.finalize()
    }

    /// A goal's hash from its header hash and its entry sum.
    static func goalHash(header: [UInt8], entries: DigestSum) -> DigestSum {
        var bytes = goalPrefix
        bytes.reserveCapacity(goalPrefix.count + 64)
        bytes += header
        entries.write(into: &bytes)
        return DigestSum(sha256: bytes)
    }

    /// The digest (hex) of a ledger whose created goals' hashes sum to `sum`, `count` of them.
    static func digest(sum: DigestSum, count: UInt64) -> String {
        var bytes = ledgerPrefix
        sum.write(into: &bytes)
        bytes += count.bigEndianBytes
        var h = SHA256()
        h.update(bytes)
        return SHA256.hexString(h.finalize())
    }

    /// The sum of a goal's live entries' hashes, from scratch.
    static func entrySum(of g: GoalState) throws(LedgerError) -> DigestSum {
        var sum = DigestSum.zero
        var hashing = EntryHashing()
        g.forEachLiveEntry(under: g.historyRule) { e in hashing.add(e, 0) { _, h in sum += h } }
        hashing.finish { _, h in sum += h }
        return sum
    }

    /// What a goal contributes, from scratch: its entry sum, and its header hash once it exists
    /// (a goal only some of whose events have arrived contributes nothing to the digest).
    static func parts(of g: GoalState) throws(LedgerError) -> GoalDigest {
        GoalDigest(entrySum: try entrySum(of: g), header: g.exists ? try headerHash(g) : nil)
    }
}

extension ProgressEntry {
    /// The entry's binary form, which its digest term hashes: every fact its JSON object has,
    /// each of fixed width or length-prefixed, so that two different entries never have the same
    /// bytes. In order: the id (16 bytes); a flags byte (1: an amount follows, 2: a completion is
    /// set, 4: it is done); the amount in millionths (16 bytes, two's complement, big-endian)
    /// when there is one; `occurredAt` in milliseconds since 1970 (8 bytes, two's complement,
    /// big-endian); the day in days since 1970-01-01 (4 bytes, two's complement, big-endian);
    /// the device name's UTF-8 length (4 bytes, big-endian) and bytes. Written at the start of
    /// `out` (which has room for `digestFormSize`), the device name given as `name` (its
    /// UTF-8); how many bytes.
    func writeDigestForm(device name: UnsafeBufferPointer<UInt8>, into out: UnsafeMutableRawBufferPointer) -> Int {
        precondition(out.count >= digestFormSize(deviceBytes: name.count))
        var at = 0
        func put<T>(_ value: T) {
            out.storeBytes(of: value, toByteOffset: at, as: T.self)
            at += MemoryLayout<T>.size
        }
        withUnsafeBytes(of: id.uuid) { UnsafeMutableRawBufferPointer(rebasing: out[0..<16]).copyMemory(from: $0) }
        at = 16
        var flags: UInt8 = 0
        if amount != nil { flags |= 1 }
        if let completed { flags |= completed ? 6 : 2 }
        put(flags)
        if let amount {
            let micros = UInt128(bitPattern: amount.micros)
            put(UInt64(truncatingIfNeeded: micros >> 64).bigEndian)
            put(UInt64(truncatingIfNeeded: micros).bigEndian)
        }
        put(UInt64(bitPattern: occurredAt.milliseconds).bigEndian)
        put(UInt32(bitPattern: day.daysSinceEpoch).bigEndian)
        put(UInt32(truncatingIfNeeded: name.count).bigEndian)
        if let base = name.baseAddress, !name.isEmpty {
            UnsafeMutableRawBufferPointer(rebasing: out[at..<(at + name.count)]).copyMemory(from: UnsafeRawBufferPointer(start: base, count: name.count))
        }
        return at + name.count
    }

    /// The bytes of the digest form with a device name of `deviceBytes` bytes.
    func digestFormSize(deviceBytes: Int) -> Int { 16 + 1 + (amount == nil ? 0 : 16) + 8 + 4 + 4 + deviceBytes }
}

/// Entries' hashes (`ProjectionDigest.entryHash`), two at a time (`SHA256.hashPair`: nearly
/// twice as fast as one after the other): an entry added waits for the next, and each hash is
/// handed to the caller with the tag its entry came with. ``finish(_:)`` hashes the one left.
struct EntryHashing {
    /// The message of the entry waiting, and the next one's, in buffers reused entry after entry.
    private var waiting: [UInt8] = []
    private var next: [UInt8] = []
    private var waitingCount = 0
    private var waitingTag = 0
    private var isWaiting = false

    /// Hashes `e` with the entry waiting, if one is, handing both hashes to `done`; else keeps
    /// it waiting.
    mutating func add(_ e: ProgressEntry, _ tag: Int, _ done: (Int, DigestSum) throws -> Void) rethrows {
        guard isWaiting else {
            waitingCount = ProjectionDigest.writeEntryMessage(e, into: &waiting)
            waitingTag = tag
            isWaiting = true
            return
        }
        let count = ProjectionDigest.writeEntryMessage(e, into: &next)
        var words: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &words) { out in
            waiting.withUnsafeBytes { a in
                next.withUnsafeBytes { b in
                    SHA256.hashPair(
                        UnsafeRawBufferPointer(rebasing: a[..<waitingCount]), UnsafeRawBufferPointer(rebasing: b[..<count]),
                        into: UnsafeMutableRawBufferPointer(rebasing: out[0..<32]), UnsafeMutableRawBufferPointer(rebasing: out[32..<64]))
                }
            }
        }
        isWaiting = false
        try done(waitingTag, DigestSum(bigEndianWords: words.0, words.1, words.2, words.3))
        try done(tag, DigestSum(bigEndianWords: words.4, words.5, words.6, words.7))
    }

    /// Hashes the entry left waiting, if any.
    mutating func finish(_ done: (Int, DigestSum) throws -> Void) rethrows {
        guard isWaiting else { return }
        isWaiting = false
        try done(waitingTag, waiting.withUnsafeBytes { DigestSum(sha256: UnsafeRawBufferPointer(rebasing: $0[..<waitingCount])) })
    }
}

/// What the store keeps per goal for the digest: its entry sum, and its header hash when the
/// goal exists. Stored as the sum's 32 bytes followed by the header hash's 32 when present.
struct GoalDigest: Equatable {
    var entrySum: DigestSum
    var header: [UInt8]?

    static let none = GoalDigest(entrySum: .zero, header: nil)

    /// The goal's hash when it counts (it exists), else nil.
    var goalHash: DigestSum? { header.map { ProjectionDigest.goalHash(header: $0, entries: entrySum) } }

    /// Whether the goal has nothing to keep (no live entry and no `goalCreated`).
    var isEmpty: Bool { header == nil && entrySum.isZero }

    var bytes: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(64)
        entrySum.write(into: &out)
        if let header { out += header }
        return out
    }

    init(entrySum: DigestSum, header: [UInt8]?) {
        self.entrySum = entrySum
        self.header = header
    }

    init?(bytes b: UnsafeRawBufferPointer) {
        guard b.count == 32 || b.count == 64 else { return nil }
        entrySum = DigestSum(UnsafeRawBufferPointer(rebasing: b[0..<32]))
        header = b.count == 64 ? Array(b[32..<64]) : nil
    }
}

/// The digest's running totals over a ledger's goals: the sum of the created goals' hashes and
/// their number. Stored as the sum's 32 bytes followed by the count (u64 big-endian).
struct LedgerDigest: Equatable {
    var sum = DigestSum.zero
    var count: UInt64 = 0

    var hex: String { ProjectionDigest.digest(sum: sum, count: count) }

    /// Replaces a goal's contribution `old` with `new` (nil: it does not count).
    mutating func replace(_ old: DigestSum?, with new: DigestSum?) {
        if let old {
            sum -= old
            count &-= 1
        }
        if let new {
            sum += new
            count &+= 1
        }
    }

    var bytes: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(40)
        sum.write(into: &out)
        out += count.bigEndianBytes
        return out
    }

    init() {}

    init?(bytes b: UnsafeRawBufferPointer) {
        guard b.count == 40 else { return nil }
        sum = DigestSum(UnsafeRawBufferPointer(rebasing: b[0..<32]))
        count = UInt64(bigEndianBytes: UnsafeRawBufferPointer(rebasing: b[32..<40]))
    }
}

/// An integer modulo 2^256, read from and written as 32 big-endian bytes: the digest's
/// order-independent sums.
struct DigestSum: Equatable, Sendable {
    /// The four 64-bit words, most significant first.
    var w0: UInt64, w1: UInt64, w2: UInt64, w3: UInt64

    static let zero = DigestSum(w0: 0, w1: 0, w2: 0, w3: 0)

    init(w0: UInt64, w1: UInt64, w2: UInt64, w3: UInt64) {
        (self.w0, self.w1, self.w2, self.w3) = (w0, w1, w2, w3)
    }

    /// 32 bytes as a big-endian integer.
    init(_ b: UnsafeRawBufferPointer) {
        precondition(b.count == 32)
        w0 = UInt64(bigEndian: b.loadUnaligned(as: UInt64.self))
        w1 = UInt64(bigEndian: b.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
        w2 = UInt64(bigEndian: b.loadUnaligned(fromByteOffset: 16, as: UInt64.self))
        w3 = UInt64(bigEndian: b.loadUnaligned(fromByteOffset: 24, as: UInt64.self))
    }

    init(_ bytes: [UInt8]) { self = bytes.withUnsafeBytes { DigestSum($0) } }

    /// SHA-256 of `message`, as a big-endian integer.
    init(sha256 message: [UInt8]) {
        self = message.withUnsafeBytes { DigestSum(sha256: $0) }
    }

    init(sha256 message: UnsafeRawBufferPointer) {
        var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        withUnsafeMutableBytes(of: &words) { out in SHA256.hash(message, into: out) }
        self.init(bigEndianWords: words.0, words.1, words.2, words.3)
    }

    /// The sum whose 32 bytes, big-endian, are those of the four words as stored in memory.
    init(bigEndianWords w0: UInt64, _ w1: UInt64, _ w2: UInt64, _ w3: UInt64) {
        self.init(w0: UInt64(bigEndian: w0), w1: UInt64(bigEndian: w1), w2: UInt64(bigEndian: w2), w3: UInt64(bigEndian: w3))
    }

    var isZero: Bool { w0 | w1 | w2 | w3 == 0 }

    /// Appends the 32 big-endian bytes.
    func write(into out: inout [UInt8]) {
        withUnsafeBytes(of: (w0.bigEndian, w1.bigEndian, w2.bigEndian, w3.bigEndian)) { out.append(contentsOf: $0) }
    }

    static func + (a: DigestSum, b: DigestSum) -> DigestSum {
        let (r3, c3) = a.w3.addingReportingOverflow(b.w3)
        let (s2, c2a) = a.w2.addingReportingOverflow(b.w2)
        let (r2, c2b) = s2.addingReportingOverflow(c3 ? 1 : 0)
        let (s1, c1a) = a.w1.addingReportingOverflow(b.w1)
        let (r1, c1b) = s1.addingReportingOverflow(c2a || c2b ? 1 : 0)
        let r0 = a.w0 &+ b.w0 &+ (c1a || c1b ? 1 : 0)
        return DigestSum(w0: r0, w1: r1, w2: r2, w3: r3)
    }

    /// The additive inverse modulo 2^256 (two's complement).
    static prefix func - (a: DigestSum) -> DigestSum {
        DigestSum(w0: ~a.w0, w1: ~a.w1, w2: ~a.w2, w3: ~a.w3) + DigestSum(w0: 0, w1: 0, w2: 0, w3: 1)
    }

    static func - (a: DigestSum, b: DigestSum) -> DigestSum { a + -b }
    static func += (a: inout DigestSum, b: DigestSum) { a = a + b }
    static func -= (a: inout DigestSum, b: DigestSum) { a = a - b }
}
