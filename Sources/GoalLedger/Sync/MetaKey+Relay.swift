import Foundation

extension MetaKey {
    /// `relay:`, an origin, a zero byte and a sequence (u64 BE): a record from a relay blob that
    /// waits for its predecessor or its enrolment; the value is the store's clock when it was
    /// kept (milliseconds, u64 BE), then the record.
    static let relayParked = Array("relay:".utf8)
}
