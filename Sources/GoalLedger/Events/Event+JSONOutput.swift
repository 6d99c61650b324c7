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
            m.append(("deletionsSeen", .sequences(seen)))
        }
        return .object(m)
    }
}

extension Payload {
    /// The payload's fields in their JSON form, in a stable order.
    public var jsonMembers: [(String, JSONValue)] {
        struct Members: PayloadVisitor {
            func visit<P: EventPayload>(_ payload: P, as type: EventType) -> [(String, JSONValue)] { payload.jsonMembers }
        }
        var v = Members()
        return visit(&v)
    }
}

extension JSONValue {
    /// An id in its JSON form (upper-case), or null.
    static func id(_ u: UUID?) -> JSONValue { u.map { .string($0.upperString) } ?? .null }
    /// A string, or null.
    static func nullable(_ s: String?) -> JSONValue { s.map { .string($0) } ?? .null }
    /// A day as YYYY-MM-DD, or null.
    static func day(_ d: Day?) -> JSONValue { d.map { .string($0.description) } ?? .null }
    /// A map of device names to sequences, devices in UTF-8 byte order.
    static func sequences(_ m: [String: UInt64]) -> JSONValue {
        .object(m.sorted { String.bytesPrecede($0.key, $1.key) }.map { ($0.key, .number(Double($0.value))) })
    }
}
