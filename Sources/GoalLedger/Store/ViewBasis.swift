import Foundation

/// What a goal's runs of completed periods were built for (its cadence, kind and target), and
/// the length of its longest run: cadence (u8) · kind (u8) · target in millionths (u64 BE) ·
/// best (u32 BE).
struct ViewBasis: Equatable {
    var cadence: Cadence
    var kind: ProgressKind
    var targetMicro: Int64
    var best: UInt32 = 0

    init(cadence: Cadence, kind: ProgressKind, targetMicro: Int64, best: UInt32 = 0) {
        self.cadence = cadence
        self.kind = kind
        self.targetMicro = targetMicro
        self.best = best
    }

    /// The basis `goal`'s header gives (the best run not yet known).
    init(_ goal: GoalState) {
        self.init(cadence: goal.cadence?.value ?? .once, kind: goal.kind, targetMicro: Int64(clamping: ((goal.target?.value ?? nil)?.micros ?? 0)))
    }

    func sameRules(as other: ViewBasis) -> Bool {
        cadence == other.cadence && kind == other.kind && targetMicro == other.targetMicro
    }

    /// Whether a period summarized by `s` is complete, as `GoalView` counts it in a streak.
    func isComplete(_ s: DaySummary) -> Bool { s.hasEntries(kind) && s.summary(kind, targetMicro: targetMicro).completed }

    var bytes: [UInt8] {
        var w = ByteWriter(capacity: 14)
        w.u8(Self.code(cadence))
        w.u8(kind == .measurable ? 1 : 0)
        w.u64BE(UInt64(bitPattern: targetMicro))
        withUnsafeBytes(of: best.bigEndian) { w.bytes += $0 }
        return w.bytes
    }

    init(bytes: UnsafeRawBufferPointer) throws(RecordDecodingError) {
        guard bytes.count == 14, let cadence = Self.cadence(code: bytes[0]) else {
            throw RecordDecodingError(reason: "a view basis of \(bytes.count) bytes")
        }
        self.cadence = cadence
        kind = bytes[1] == 1 ? .measurable : .outcome
        targetMicro = Int64(bitPattern: UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 2, as: UInt64.self)))
        best = UInt32(bigEndian: bytes.loadUnaligned(fromByteOffset: 10, as: UInt32.self))
    }

    static func code(_ c: Cadence) -> UInt8 {
        switch c {
        case .once: 0
        case .daily: 1
        case .weekly: 2
        case .monthly: 3
        case .yearly: 4
        }
    }

    static func cadence(code: UInt8) -> Cadence? {
        Cadence.allCases.first { Self.code($0) == code }
    }
}
