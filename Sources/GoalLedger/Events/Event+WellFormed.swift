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
        try payload.checkWellFormed()
    }
}

extension Payload {
    /// Checks the payload's fields (see `Event.checkWellFormed`).
    func checkWellFormed() throws(FieldError) {
        struct WellFormed: PayloadVisitor {
            func visit<P: EventPayload>(_ payload: P, as type: EventType) throws(FieldError) { try payload.checkWellFormed() }
        }
        var v = WellFormed()
        try visit(&v)
    }
}
