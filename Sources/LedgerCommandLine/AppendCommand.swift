import Foundation
import GoalLedger

enum AppendCommand {
    static let file = Option.text("--file", "F", "read the lines from F instead of stdin")
    static let expectVersion = Option.integer("--expect-version", "N", "refuse (exit 4) unless the batch's one goal is at version N", minimum: 0)

    static let spec = CommandSpec(
        name: "append", summary: "append JSON event lines (stdin, or --file) as one atomic batch",
        options: [
            file.spec,
            expectVersion.spec,
        ],
        run: run)

    static func run(_ inv: inout Invocation) throws(LedgerError) {
        let data: Data
        if let file = try inv.value(Self.file) {
            guard let d = FileManager.default.contents(atPath: file) else {
                throw LedgerError(.invalidInput, "cannot read \(file)")
            }
            data = d
        } else {
            data = inv.readInput()
        }
        let expected = try inv.value(Self.expectVersion)
        let store = try inv.openStore()
        let (drafts, lines) = try parseLines(data, schema: store.schema)
        let results = try store.append(drafts, lines: lines, expectedVersion: expected, now: try inv.now())
        for r in results { try inv.printJSON(r.json) }
    }

    /// One event per non-blank line; errors name the line number in the input.
    static func parseLines(_ data: Data, schema: Int) throws(LedgerError) -> ([EventDraft], [Int]) {
        var drafts: [EventDraft] = []
        var lines: [Int] = []
        do {
            try data.withUnsafeBytes { (all: UnsafeRawBufferPointer) throws in
                var number = 0
                var start = 0
                while start <= all.count {
                    // The line runs to the next line feed (or the end), without a carriage return.
                    var end = start
                    while end < all.count, all[end] != UInt8(ascii: "\n") { end += 1 }
                    let next = end + 1
                    if end > start, all[end - 1] == UInt8(ascii: "\r") { end -= 1 }
                    number += 1
                    let bytes = all[start..<end]
                    start = next
                    if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { continue }
                    do {
                        let value = try JSONParser.parse(bytes)
                        drafts.append(try EventDraft(json: value, schema: schema))
                    } catch let e as JSONSyntaxError {
                        throw LedgerError.invalidLine(number, field: nil, "malformed JSON: \(e)")
                    } catch let e as FieldError {
                        throw LedgerError.invalidLine(number, field: e.field, e.message)
                    } catch {
                        throw LedgerError.invalidLine(number, field: nil, "\(error)")
                    }
                    lines.append(number)
                }
            }
        } catch let e as LedgerError {
            throw e
        } catch {
            throw LedgerError(.internal, "reading the lines failed: \(error)")
        }
        return (drafts, lines)
    }
}
