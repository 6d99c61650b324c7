import Foundation

/// How a record holds an amount or a target.
///
/// Records written before amounts were exact hold an IEEE 754 double (8 bytes, big-endian),
/// whose shortest decimal form is the amount. A record still holds a double whenever the
/// double nearest the amount has the amount as its shortest form (every amount with at most
/// 15 significant digits, and every amount an older ledger could hold), so a ledger that
/// predates exact amounts reads it; any other amount (`999999999999.999999`) is held as a
/// zig-zag varint of millionths under a presence bit of its own, which an older ledger
/// refuses rather than rounds. A record decoded and encoded again keeps its bytes: a double
/// that is not exactly an amount (−0, or a value the gate refuses, written before the gate)
/// is kept as it was beside the payload (`legacy`) and written back unchanged.
enum StoredAmount {
    /// The amount of a stored double, and the double itself when it is not exactly that
    /// amount's own (−0) or is no amount at all (the gate sets such an event aside).
    static func fromDouble(_ d: Double) -> (amount: Amount?, legacy: Double?) {
        if d == 0 { return (Amount.zero, d.sign == .minus ? d : nil) }
        do {
            return (try Amount(double: d, field: "amount"), nil)
        } catch {
            return (nil, d)
        }
    }

    /// An amount stored in millionths, refused beyond ±10^18.
    static func fromMicros(_ r: inout ByteReader) throws(RecordDecodingError) -> Amount {
        let m = try r.signed()
        guard m.magnitude <= UInt64(Amount.maximumMicros) else { throw RecordDecodingError(reason: "an amount beyond ±1e12") }
        return Amount(unchecked: Int128(m))
    }

    /// Reads the amount at the current position: a double when `double`, millionths when
    /// `micros` (both at once is no record this ledger wrote).
    static func read(_ r: inout ByteReader, double: Bool, micros: Bool) throws(RecordDecodingError) -> (amount: Amount?, legacy: Double?) {
        if double && micros { throw RecordDecodingError(reason: "an amount stored twice") }
        if double { return fromDouble(try r.double()) }
        if micros { return (try fromMicros(&r), nil) }
        return (nil, nil)
    }

    /// The double a record holds for `amount` (with `legacy`, the double it was read from), or
    /// nil when it is held in millionths.
    static func double(for amount: Amount?, legacy: Double?) -> Double? {
        if let legacy { return legacy }
        guard let amount else { return nil }
        // At most 15 significant digits: the nearest double reads back as the amount.
        if amount.micros.magnitude < 1_000_000_000_000_000 { return Double(Int64(amount.micros)) / 1e6 }
        guard let d = Double(amount.description), (try? Amount(double: d, field: "amount")) == amount else { return nil }
        return d
    }

    /// Writes what `double(for:legacy:)` chose (`double`): the double, or else the millionths.
    static func write(_ amount: Amount?, double: Double?, into w: inout ByteWriter) {
        if let d = double {
            w.double(d)
        } else if let amount {
            // An event's amount is within ±10^18 (the gate), which 64 bits hold.
            w.signed(Int64(clamping: amount.micros))
        }
    }
}
