/// The one-byte codes under which enums reach disk (event records and projection rows).
///
/// A code is written once and means the same forever: never reorder or reuse one; a new case
/// takes the next free code. The codes are explicit, not the order of the cases, so that
/// reordering or inserting a case cannot change what stored records mean; a golden-record test
/// pins them. (`EventType` has its own codes, in `EventType.swift`; `GoalField` its own, beside
/// `GoalEdited`, the event that stores them.)
protocol StoredCode: CaseIterable, Equatable {
    var storedCode: UInt8 { get }
}

extension StoredCode {
    init?(storedCode: UInt8) {
        guard let value = Self.allCases.first(where: { $0.storedCode == storedCode }) else { return nil }
        self = value
    }

    /// Decodes a stored code, naming `what` when it is unknown.
    static func decode(_ code: UInt8, _ what: String) throws(RecordDecodingError) -> Self {
        guard let value = Self(storedCode: code) else { throw RecordDecodingError(reason: "unknown \(what) \(code)") }
        return value
    }
}

extension Cadence: StoredCode {
    var storedCode: UInt8 {
        switch self {
        case .once: 0
        case .daily: 1
        case .weekly: 2
        case .monthly: 3
        case .yearly: 4
        }
    }
}

extension ProgressKind: StoredCode {
    var storedCode: UInt8 {
        switch self {
        case .outcome: 0
        case .measurable: 1
        }
    }
}

extension NotificationStrategy: StoredCode {
    var storedCode: UInt8 {
        switch self {
        case .repeating: 0
        case .window: 1
        }
    }
}

extension AuthorizationStatus: StoredCode {
    var storedCode: UInt8 {
        switch self {
        case .notDetermined: 0
        case .denied: 1
        case .authorized: 2
        case .provisional: 3
        case .ephemeral: 4
        }
    }
}
