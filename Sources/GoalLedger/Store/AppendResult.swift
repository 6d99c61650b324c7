import Foundation

/// What `append` did with one submitted event.
public struct AppendResult: Equatable, Sendable {
    /// The event's id: the draft's, or the one the ledger made.
    public var id: UUID
    /// The event's position in the store's log (for a duplicate, the original's).
    public var position: UInt64
    /// The event's clock reading (for a duplicate, the original's).
    public var hlc: HLC
    /// True when an event with this id was already in the store (nothing was written for it).
    public var duplicate: Bool

    /// `{"id","position","hlc","duplicate"}`, the clock as 16 hex digits.
    public var json: JSONValue {
        .object([
            ("id", .string(id.uuidString)), ("position", .number(Double(position))),
            ("hlc", .string(hlc.description)), ("duplicate", .bool(duplicate)),
        ])
    }

    /// Appends `json` as one line of compact JSON (its members in that order, no line end) to
    /// `out`, written byte by byte without a JSON tree or intermediate strings: `ledger append`
    /// prints one per event, many into one buffer. The position is written in whole digits, as
    /// `JSONWriter` writes it below 10^18.
    package func writeJSONLine(into out: inout [UInt8]) {
        out.append(contentsOf: #"{"id":""#.utf8)
        id.writeUpper(into: &out)
        out.append(contentsOf: #"","position":"#.utf8)
        let digits = out.count
        var p = position
        repeat {
            out.append(UInt8(ascii: "0") + UInt8(p % 10))
            p /= 10
        } while p > 0
        out[digits...].reverse()
        out.append(contentsOf: #","hlc":""#.utf8)
        hlc.writeHex(into: &out)
        out.append(contentsOf: #"","duplicate":"#.utf8)
        out.append(contentsOf: (duplicate ? "true}" : "false}").utf8)
    }
}
