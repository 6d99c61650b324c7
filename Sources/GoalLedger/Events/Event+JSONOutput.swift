import Foundation

extension Event {
    /// The event in its JSON form: the envelope, then the payload's fields as `append` accepts
    /// them (with every default filled in), then what the ledger filled in (`replaces`, `observed`, `seen`, `deletionsSeen`).
    public func json(position: UInt64? = nil) -> JSONValue {
        var m: [(String, JSONValue)] = []
        if let position { m.append(("position", .number(Double(position)))) }
        m.append(("id", .string(id.upperString)))
        m.append(("type", .string(type.name)))
        m.append(("device", .string(origin)))
        m.append(("sequence", .number(Double(sequence))))
        m.append(("hlc", .string(hlc.description)))
        m.append(("at", .string(at.rfc3339)))
        m.append(("schema", .number(Double(schema))))
        m.append(contentsOf: payload.jsonMembers)
        if let h = previousHash { m.append(("previousHash", .string(Hex.string(h)))) }
        if let s = signature {
            m.append(("signedBy", .string(Hex.string(signer ?? []))))
            m.append(("signature", .string(Hex.string(s))))
        }
        if let seen = deletionsSeen, !seen.isEmpty {
            m.append(("deletionsSeen", .object(seen.sorted { String.bytesPrecede($0.key, $1.key) }.map { ($0.key, .number(Double($0.value))) })))
        }
        return .object(m)
    }
}

extension Payload {
    /// The payload's fields in their JSON form, in a stable order.
    public var jsonMembers: [(String, JSONValue)] {
        func id(_ u: UUID?) -> JSONValue { u.map { .string($0.upperString) } ?? .null }
        func str(_ s: String?) -> JSONValue { s.map { .string($0) } ?? .null }
        func day(_ d: Day?) -> JSONValue { d.map { .string($0.description) } ?? .null }
        var m: [(String, JSONValue)] = []
        switch self {
        case .goalCreated(let p):
            m.append(("goal", id(p.goal)))
            m.append(("title", .string(p.title)))
            if let d = p.details { m.append(("details", .string(d))) }
            m.append(("cadence", .string(p.cadence.rawValue)))
            if let t = p.targetDate { m.append(("targetDate", day(t))) }
            var progress: [(String, JSONValue)] = [("kind", .string(p.progressKind.rawValue))]
            if p.progressKind == .measurable {
                progress.append(("target", .number(p.target ?? 0)))
                if let u = p.unit { progress.append(("unit", .string(u))) }
            }
            m.append(("progress", .object(progress)))
            if let r = p.reminder {
                var reminder: [(String, JSONValue)] = [("hour", .number(Double(r.hour))), ("minute", .number(Double(r.minute)))]
                if let d = p.reminderDevices { reminder.append(("devices", .array(d.map { .string($0) }))) }
                m.append(("reminder", .object(reminder)))
            }
            if !p.tags.isEmpty { m.append(("tags", .array(p.tags.map { .string($0) }))) }
        case .goalEdited(let p):
            m.append(("goal", id(p.goal)))
            if let t = p.title { m.append(("title", .string(t))) }
            if let d = p.details { m.append(("details", str(d))) }
            if let c = p.cadence { m.append(("cadence", .string(c.rawValue))) }
            if let t = p.targetDate { m.append(("targetDate", day(t))) }
            if let t = p.target { m.append(("target", .number(t))) }
            if let u = p.unit { m.append(("unit", str(u))) }
            if !p.replaces.isEmpty {
                m.append(("replaces", .object(p.replaces.sorted { $0.key < $1.key }.map { ($0.key.rawValue, id($0.value)) })))
            }
        case .goalDeleted(let p), .goalRestored(let p), .reminderCleared(let p):
            m.append(("goal", id(p.goal)))
            if let r = p.replaces { m.append(("replaces", id(r))) }
            if !p.seen.isEmpty {
                m.append(("seen", .object(p.seen.sorted { String.bytesPrecede($0.key, $1.key) }.map { ($0.key, .number(Double($0.value))) })))
            }
        case .reminderSet(let p):
            m.append(("goal", id(p.goal)))
            if let h = p.hour { m.append(("hour", .number(Double(h)))) }
            if let mi = p.minute { m.append(("minute", .number(Double(mi)))) }
            if let d = p.devices { m.append(("devices", .array(d.map { .string($0) }))) }
            if let r = p.replaces { m.append(("replaces", id(r))) }
        case .progressRecorded(let p):
            m.append(("goal", id(p.goal)))
            if let a = p.amount { m.append(("amount", .number(a))) }
            if let c = p.completed { m.append(("completed", .bool(c))) }
            if let o = p.occurredAt { m.append(("occurredAt", .string(o.rfc3339))) }
            if let d = p.day { m.append(("day", day(d))) }
        case .progressRemoved(let p):
            m.append(("goal", id(p.goal)))
            m.append(("entry", id(p.entry)))
        case .tagAdded(let p):
            m.append(("goal", id(p.goal)))
            m.append(("tag", .string(p.tag)))
        case .tagRemoved(let p):
            m.append(("goal", id(p.goal)))
            m.append(("tag", .string(p.tag)))
            if !p.observed.isEmpty { m.append(("observed", .array(p.observed.map { id($0) }))) }
        case .deviceConfigured(let p):
            m.append(("timeZone", .string(p.timeZone)))
            m.append(("firstWeekday", .number(Double(p.firstWeekday))))
            m.append(("locale", .string(p.locale)))
            m.append(("strategy", .string(p.strategy.rawValue)))
            m.append(("windowDays", .number(Double(p.windowDays))))
            m.append(("capacity", .number(Double(p.capacity))))
        case .notificationAuthorization(let p):
            m.append(("status", .string(p.status.rawValue)))
        case .deviceEnrolled(let p):
            m.append(("enrolled", .string(p.device)))
            m.append(("publicKey", .string(Hex.string(p.publicKey))))
            m.append(("from", .number(Double(p.from))))
        case .deviceRevoked(let p):
            m.append(("revoked", .string(p.device)))
            m.append(("after", .number(Double(p.after))))
        case .progressHistoryReplaced(let p):
            m.append(("goal", id(p.goal)))
            m.append(
                (
                    "entries",
                    .array(
                        p.entries.map { e in
                            var o: [(String, JSONValue)] = [("id", .string(e.id.upperString))]
                            if let a = e.amount { o.append(("amount", .number(a))) }
                            if let c = e.completed { o.append(("completed", .bool(c))) }
                            o.append(("occurredAt", .string(e.occurredAt.rfc3339)))
                            if let d = e.day { o.append(("day", day(d))) }
                            return .object(o)
                        })
                ))
            if let b = p.base { m.append(("base", id(b))) }
        }
        return m
    }
}
