import Foundation
import Synchronization

/// The one well-formedness gate every event passes before it is written, signed or sent,
/// however it was made: a JSON line (`EventDraft(json:)`), a typed value from an app
/// (`LedgerWriter.append`), an import or a sync (`Event.checkWellFormed()`), a scenario step.
///
/// Readers of the JSON form check only its shape (types, unknown and missing members); every
/// limit and rule is checked here, once, with one message per rule, naming the field by its
/// path in the JSON form (`reminder.hour`, `tags[2]`, `progress.target`).
///
/// Two stages: a draft may leave out what the ledger fills in at append (an entry's day, a
/// reminder's time); a stored event carries every such field.
enum GateStage {
    /// An event as a caller submits it.
    case draft
    /// An event as a store holds it: every filled-in field is present.
    case stored
}

extension EventDraft {
    /// Checks the draft against the gate: the limits of every field, and `at` within
    /// 1970–9999. Business rules (unknown goals, the kind of progress) are the store's, at
    /// append.
    public func checkWellFormed() throws(FieldError) {
        if let at { _ = try FieldRules.instant(at, field: "at") }
        try payload.checkWellFormed(.draft)
    }
}

extension Event {
    /// Checks the envelope of an event from elsewhere: what its origin's chain, the store's
    /// indexes and its clock rely on (a clock reading within 1970–9999, see ``HLC/latest``). An event that fails it cannot be placed in any history and is refused.
    public func checkEnvelope() throws(FieldError) {
        guard DeviceName.isValid(origin) else { throw FieldError("device", "invalid device name \"\(origin)\"") }
        guard sequence >= 1 else { throw FieldError("sequence", "must be at least 1") }
        guard hlc.isSupported else {
            throw FieldError(
                "hlc", "must be a clock reading within 1970–9999 (at most \(HLC.latest), \(HLC.latest.milliseconds) ms since 1970), got \(hlc)")
        }
        if let h = previousHash, h.count != 32 { throw FieldError("previousHash", "must be 32 bytes") }
        if signature != nil, previousHash == nil { throw FieldError("signature", "a signed event carries previousHash") }
        if signature != nil, signer?.count != 32 { throw FieldError("signedBy", "a signed event carries its signer's 32-byte key") }
        guard (1...UInt8(LedgerStore.currentSchema)).contains(schema) else { throw FieldError("schema", "unknown schema \(schema)") }
    }

    /// Checks a stored event against the gate: its envelope, `at` within 1970–9999, the limits
    /// of every payload field, and every field the ledger fills in at append present. Business
    /// rules are not checked: another device's events are facts.
    public func checkWellFormed() throws(FieldError) {
        try checkEnvelope()
        try checkContent()
    }

    /// The gate without the envelope: what a fold relies on. A stored event that fails it (only
    /// a store written before the gate can hold one) is set aside by every fold.
    func checkContent() throws(FieldError) {
        _ = try FieldRules.instant(at, field: "at")
        try payload.checkWellFormed(.stored)
    }

    /// Whether the fold counts the event: it passes the gate and its device was not revoked
    /// before it (`revokedAfter`: the last counted sequence of each revoked device).
    func isCounted(revokedAfter: [String: UInt64]) -> Bool {
        if GoalProjection.isRevoked(origin: origin, sequence: sequence, revokedAfter) { return false }
        return isFoldable
    }

    /// The event's change to the ledger's trust, read by the trust fold: none for an event a
    /// fold sets aside (one that fails the gate has no effect, trust included).
    var trustChange: TrustChange? {
        guard let change = payload.trustChange, isFoldable else { return nil }
        return change
    }

    /// Whether a fold may read the event (``checkContent()`` passes).
    var isFoldable: Bool {
        do throws(FieldError) {
            try checkContent()
            return true
        } catch {
            return false
        }
    }
}

extension Payload {
    /// Checks the payload's fields at `stage` (see `GateStage`).
    func checkWellFormed(_ stage: GateStage) throws(FieldError) {
        struct WellFormed: PayloadVisitor {
            let stage: GateStage
            func visit<P: EventPayload>(_ payload: P, as type: EventType) throws(FieldError) { try payload.checkWellFormed(stage) }
        }
        var v = WellFormed(stage: stage)
        try visit(&v)
    }
}

/// The rules of the gate for single field values: each rule lives here once, with its message.
enum FieldRules {
    static func title(_ s: String, field: String) throws(FieldError) -> String {
        let n = s.count
        guard EventLimits.titleLength.contains(n) else {
            throw FieldError(field, "must be 1 to 200 characters, got \(n)")
        }
        guard !s.allSatisfy(\.isWhitespace) else { throw FieldError(field, "must not be blank") }
        return s
    }

    static func details(_ s: String, field: String) throws(FieldError) -> String {
        guard s.count <= EventLimits.detailsMaximum else {
            throw FieldError(field, "must be at most \(EventLimits.detailsMaximum) characters, got \(s.count)")
        }
        return s
    }

    static func unit(_ s: String, field: String) throws(FieldError) -> String {
        guard EventLimits.unitLength.contains(s.count), !s.allSatisfy(\.isWhitespace) else {
            throw FieldError(field, "must be 1 to 32 characters, not blank")
        }
        return s
    }

    static func tag(_ s: String, field: String) throws(FieldError) -> String {
        guard EventLimits.tagLength.contains(s.count), !s.allSatisfy(\.isWhitespace) else {
            throw FieldError(field, "must be 1 to 64 characters, not blank")
        }
        return s
    }

    /// The tags of a creation: at most `EventLimits.tagsMaximum`, each a tag.
    static func tags(_ tags: [String], field: String) throws(FieldError) {
        guard tags.count <= EventLimits.tagsMaximum else {
            throw FieldError(field, "must hold at most \(EventLimits.tagsMaximum) tags, got \(tags.count)")
        }
        for (i, t) in tags.enumerated() { _ = try tag(t, field: "\(field)[\(i)]") }
    }

    /// A target: an amount greater than 0; `legacy` is the double an older record held when
    /// it is no amount (checked by the rule of doubles, which refuses it).
    static func target(_ t: Amount?, legacy: Double?, field: String) throws(FieldError) {
        if let legacy {
            let a = try Amount(double: legacy, field: field)
            _ = try a.checkedTarget(field: field)
        }
        if let t {
            guard t.isWithinEventRange else { throw FieldError(field, "must be a number between -1e12 and 1e12, got \(t)") }
            _ = try t.checkedTarget(field: field)
        }
    }

    /// The digits after the point in the shortest decimal form of a finite `v` that reads back
    /// as `v` (Swift's `description` is that form), read as the JSON parser reads a number's
    /// digits.
    static func fractionDigits(_ v: Double) -> Int {
        if v == v.rounded(.towardZero) && abs(v) < 1e15 { return 0 }
        return max(0, -JSONParser.significantDigits(Array(v.description.utf8)).exponent)
    }

    static func instant(_ i: Instant, field: String) throws(FieldError) -> Instant {
        guard Instant.supported.contains(i) else {
            throw FieldError(field, "must be between 1970-01-01T00:00:00Z and 9999-12-31T23:59:59.999Z, got \(i.milliseconds) ms since 1970")
        }
        return i
    }

    static func day(_ d: Day, field: String) throws(FieldError) -> Day {
        guard Day.supported.contains(d) else {
            throw FieldError(field, "must be between 1970-01-01 and 9999-12-31, got \(d)")
        }
        return d
    }

    /// A target date leaves a day of margin at each end of the supported range, so that its
    /// reminder, at any time in any time zone, falls on a supported instant.
    static func targetDate(_ d: Day, field: String) throws(FieldError) -> Day {
        guard Day.supportedTargets.contains(d) else {
            throw FieldError(
                field, "must be between 1970-01-02 and 9999-12-30 (its reminder must fall within 1970–9999 in every time zone), got \(d)")
        }
        return d
    }

    /// A whole number within `range`.
    static func integer(_ v: Int, in range: ClosedRange<Int>, field: String) throws(FieldError) {
        guard range.contains(v) else {
            throw FieldError(field, "must be between \(range.lowerBound) and \(range.upperBound), got \(v)")
        }
    }

    /// A reminder time: hour 0 to 23, minute 0 to 59, weekday 1 to 7 (1 = Sunday); `prefix` is
    /// the time's path in the JSON form (`reminder.` in a creation, empty in a `reminderSet`).
    static func time(hour: Int?, minute: Int?, weekday: Int? = nil, prefix: String) throws(FieldError) {
        if let hour { try integer(hour, in: 0...23, field: prefix + "hour") }
        if let minute { try integer(minute, in: 0...59, field: prefix + "minute") }
        if let weekday { try integer(weekday, in: 1...7, field: prefix + "weekday") }
    }

    /// A time zone identifier as the IANA database spells them (`Europe/Berlin`, `UTC`,
    /// `America/Argentina/Buenos_Aires`, `Etc/GMT+5`): 1 to 64 ASCII characters in 1 to 4
    /// parts separated by `/`, each part 1 to 14 letters, digits, `_`, `-`, `+` or `.`, not
    /// starting with `-` or `.`.
    ///
    /// The gate checks the spelling only, never whether this system's time zone database knows
    /// the name: a store folds every event the same way on every platform. A device appending
    /// its own settings must name a zone its system knows (``DeviceConfigured``'s local rule);
    /// a zone that another device's system knows and this one does not is planned in UTC here
    /// (see ``DeviceCalendar/timeZone``).
    static func timeZone(_ s: String, field: String) throws(FieldError) -> String {
        guard isTimeZoneName(s) else { throw FieldError(field, "must be an IANA time zone such as Europe/Berlin, got \"\(s)\"") }
        return s
    }

    static func isTimeZoneName(_ s: String) -> Bool {
        let bytes = Array(s.utf8)
        guard (1...64).contains(bytes.count) else { return false }
        let parts = bytes.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        guard (1...4).contains(parts.count) else { return false }
        for part in parts {
            guard (1...14).contains(part.count), part.first != UInt8(ascii: "-"), part.first != UInt8(ascii: ".") else { return false }
            for b in part {
                switch b {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                    UInt8(ascii: "_"), UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: "."):
                    continue
                default: return false
                }
            }
        }
        return true
    }

    /// Whether this system's time zone database knows `identifier` (asked once per name).
    private static let knownZones = Mutex<[String: Bool]>([:])

    static func isKnownTimeZone(_ identifier: String) -> Bool {
        if let known = knownZones.withLock({ $0[identifier] }) { return known }
        let found = TimeZone(identifier: identifier) != nil
        knownZones.withLock { if $0.count < 4096 { $0[identifier] = found } }
        return found
    }

    static func locale(_ s: String, field: String) throws(FieldError) -> String {
        // language[_REGION], e.g. en, en_US, ja_JP, zh_Hant_TW.
        let parts = s.split(separator: "_", omittingEmptySubsequences: false)
        let ok =
            EventLimits.localeLength.contains(s.count)
            && (2...3).contains(parts[0].count) && parts[0].allSatisfy({ $0.isASCII && $0.isLowercase })
            && parts.dropFirst().allSatisfy({ !$0.isEmpty && $0.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) })
        guard ok else { throw FieldError(field, "must be a locale such as en_US, got \"\(s)\"") }
        return s
    }

    static func deviceName(_ s: String, field: String) throws(FieldError) {
        guard DeviceName.isValid(s) else {
            throw FieldError(field, "must be a device name ([a-z0-9][a-z0-9._-]{0,63}), got \"\(s)\"")
        }
    }

    /// The devices a reminder is routed to: 1 to 32 distinct device names.
    static func reminderDevices(_ list: [String], field: String) throws(FieldError) {
        guard EventLimits.reminderDevices.contains(list.count) else {
            throw FieldError(field, "must name 1 to \(EventLimits.reminderDevices.upperBound) devices (omit it for every device)")
        }
        var seen = Set<String>()
        for (i, name) in list.enumerated() {
            guard DeviceName.isValid(name) else {
                throw FieldError("\(field)[\(i)]", "must be a device name such as phone, got \"\(name)\"")
            }
            guard seen.insert(name).inserted else { throw FieldError("\(field)[\(i)]", "\"\(name)\" appears twice") }
        }
    }

    /// Exactly one of an amount (measurable) and a completion (outcome); `prefix` is the
    /// entry's path in the JSON form.
    static func amountOrCompleted(_ amount: Amount?, legacy: Double?, _ completed: Bool?, prefix: String) throws(FieldError) {
        // A double an older record held that is no amount (NaN, too many digits) is refused by
        // the rule it broke.
        if let legacy { _ = try Amount(double: legacy, field: prefix + "amount") }
        if let amount, !amount.isWithinEventRange {
            throw FieldError(prefix + "amount", "must be a number between -1e12 and 1e12, got \(amount)")
        }
        let given = amount != nil || legacy != nil
        if given && completed != nil {
            throw FieldError(prefix + "completed", "give either amount (measurable) or completed (outcome), not both")
        }
        if !given && completed == nil { throw FieldError(prefix + "amount", "is required (or completed, for an outcome goal)") }
    }
}
