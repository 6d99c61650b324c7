import Foundation

extension Event {
    /// Checks that an event from elsewhere is well formed: the limits of the JSON form hold and
    /// every field the ledger fills in at append is present. Business rules (unknown goals,
    /// deleted goals, …) are not checked: another device's events are facts.
    public func checkWellFormed() throws(FieldError) {
        guard DeviceName.isValid(origin) else { throw FieldError("device", "invalid device name \"\(origin)\"") }
        guard sequence >= 1 else { throw FieldError("sequence", "must be at least 1") }
        if let h = previousHash, h.count != 32 { throw FieldError("previousHash", "must be 32 bytes") }
        if signature != nil, previousHash == nil { throw FieldError("signature", "a signed event carries previousHash") }
        if signature != nil, signer?.count != 32 { throw FieldError("signedBy", "a signed event carries its signer's 32-byte key") }
        guard (1...UInt8(LedgerStore.currentSchema)).contains(schema) else { throw FieldError("schema", "unknown schema \(schema)") }
        _ = try FieldRules.instant(at, field: "at")
        switch payload {
        case .goalCreated(let p):
            _ = try FieldRules.title(p.title, field: "title")
            if let d = p.details { _ = try FieldRules.details(d, field: "details") }
            if p.progressKind == .measurable {
                guard let t = p.target else { throw FieldError("progress.target", "is required for a measurable goal") }
                _ = try FieldRules.target(t, field: "progress.target")
            } else if p.target != nil || p.unit != nil {
                throw FieldError("progress", "an outcome goal has no target or unit")
            }
            if let u = p.unit { _ = try FieldRules.unit(u, field: "progress.unit") }
            if let r = p.reminder { try Self.check(r.hour, r.minute) }
            if let d = p.targetDate { _ = try FieldRules.targetDate(d, field: "targetDate") }
            if let d = p.reminderDevices {
                guard p.reminder != nil else { throw FieldError("reminder.devices", "devices without a reminder") }
                _ = try FieldRules.reminderDevices(d, field: "reminder.devices")
            }
            guard p.tags.count <= EventLimits.tagsMaximum else { throw FieldError("tags", "too many tags") }
            for t in p.tags { _ = try FieldRules.tag(t, field: "tags") }
        case .goalEdited(let p):
            guard !p.changedFields.isEmpty else { throw FieldError(nil, "goalEdited changes nothing") }
            if let t = p.title { _ = try FieldRules.title(t, field: "title") }
            if let d = p.details ?? nil { _ = try FieldRules.details(d, field: "details") }
            if let t = p.target { _ = try FieldRules.target(t, field: "target") }
            if let d = p.targetDate ?? nil { _ = try FieldRules.targetDate(d, field: "targetDate") }
            if let u = p.unit ?? nil { _ = try FieldRules.unit(u, field: "unit") }
        case .goalDeleted, .goalRestored, .reminderCleared, .progressRemoved:
            break
        case .reminderSet(let p):
            guard let h = p.hour, let m = p.minute else { throw FieldError("hour", "a stored reminderSet carries hour and minute") }
            try Self.check(h, m)
            if let d = p.devices { _ = try FieldRules.reminderDevices(d, field: "devices") }
        case .progressRecorded(let p):
            guard (p.amount == nil) != (p.completed == nil) else { throw FieldError("amount", "exactly one of amount and completed") }
            if let a = p.amount { _ = try FieldRules.amount(a, field: "amount") }
            guard let occurred = p.occurredAt, let day = p.day else {
                throw FieldError("day", "a stored progressRecorded carries occurredAt and day")
            }
            _ = try FieldRules.instant(occurred, field: "occurredAt")
            _ = try FieldRules.day(day, field: "day")
        case .tagAdded(let p):
            _ = try FieldRules.tag(p.tag, field: "tag")
        case .tagRemoved(let p):
            _ = try FieldRules.tag(p.tag, field: "tag")
        case .deviceConfigured(let p):
            _ = try FieldRules.timeZone(p.timeZone, field: "timeZone")
            _ = try FieldRules.locale(p.locale, field: "locale")
            guard (1...7).contains(p.firstWeekday) else { throw FieldError("firstWeekday", "must be between 1 and 7") }
            guard (1...30).contains(p.windowDays) else { throw FieldError("windowDays", "must be between 1 and 30") }
            guard (1...512).contains(p.capacity) else { throw FieldError("capacity", "must be between 1 and 512") }
        case .notificationAuthorization:
            break
        case .deviceEnrolled(let p):
            guard DeviceName.isValid(p.device) else { throw FieldError("device", "invalid device name \"\(p.device)\"") }
            guard p.publicKey.count == 32 else { throw FieldError("publicKey", "must be 32 bytes") }
            guard p.from >= 1 else { throw FieldError("from", "must be at least 1") }
        case .deviceRevoked(let p):
            guard DeviceName.isValid(p.device) else { throw FieldError("device", "invalid device name \"\(p.device)\"") }
        case .progressHistoryReplaced(let p):
            guard Set(p.entries.map(\.id)).count == p.entries.count else { throw FieldError("entries", "an entry id appears twice") }
            for e in p.entries {
                guard (e.amount == nil) != (e.completed == nil) else { throw FieldError("entries", "exactly one of amount and completed") }
                if let a = e.amount { _ = try FieldRules.amount(a, field: "entries") }
                _ = try FieldRules.instant(e.occurredAt, field: "entries")
                if let d = e.day { _ = try FieldRules.day(d, field: "entries") }
            }
        }
    }

    private static func check(_ hour: Int, _ minute: Int) throws(FieldError) {
        guard (0...23).contains(hour) else { throw FieldError("hour", "must be between 0 and 23") }
        guard (0...59).contains(minute) else { throw FieldError("minute", "must be between 0 and 59") }
    }
}
