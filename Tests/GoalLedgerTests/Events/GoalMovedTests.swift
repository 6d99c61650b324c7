import Foundation
import Testing

@testable import GoalLedger

/// `goalMoved` at the gate, in its JSON and stored forms, and the position keys it carries.
struct GoalMovedTests {
    let goal = "00000000-0000-4000-8000-000000000001"
    let anchor = "00000000-0000-4000-8000-000000000002"

    func event(_ m: GoalMoved) -> Event {
        Event(
            id: UUID(), origin: "phone", sequence: 1, hlc: HLC(milliseconds: 1_793_602_800_000, counter: 0),
            at: instant("2026-11-02T07:00:00Z"), schema: 2, payload: .goalMoved(m))
    }

    @Test func aLineNamesItsPlaceAndReadsBackAsWritten() throws {
        let cases: [(String, GoalPlacement)] = [
            (#""after":"\#(anchor)""#, .after(UUID(uuidString: anchor)!)), (#""after":null"#, .first),
            (#""before":"\#(anchor)""#, .before(UUID(uuidString: anchor)!)), (#""before":null"#, .last),
        ]
        for (member, placement) in cases {
            let d = try draft(#"{"type":"goalMoved","goal":"\#(goal)",\#(member)}"#)
            guard case .goalMoved(let m) = d.payload else {
                Issue.record("not a move")
                continue
            }
            #expect(m.placement == placement && m.key == nil && m.replaces == nil)
            // The printed members are the line's own.
            let printed = JSONValue.object([("type", .string("goalMoved"))] + d.payload.jsonMembers)
            #expect(try EventDraft(json: printed).payload == d.payload)
        }
    }

    @Test func hostileLinesAreRefusedNamingTheField() {
        let cases: [(String, String)] = [
            (#""after":"\#(anchor)","before":null"#, "before"),
            ("", "after"),
            (#""after":5"#, "after"),
            (#""before":"tomorrow""#, "before"),
            (#""after":"\#(goal)""#, "after"),
            (#""after":null,"key":"7f""#, "key"),
            (#""after":null,"replaces":"\#(anchor)""#, "replaces"),
        ]
        for (members, field) in cases {
            let line = #"{"type":"goalMoved","goal":"\#(goal)"\#(members.isEmpty ? "" : ",")\#(members)}"#
            let error = decodeError(try! JSONParser.parse(line))
            #expect(error?.field == field, "\(line): \(String(describing: error))")
        }
        // A schema-1 store has no goalMoved.
        #expect(decodeError(try! JSONParser.parse(#"{"type":"goalMoved","goal":"\#(goal)","after":null}"#), schema: 1)?.field == "type")
    }

    @Test func storedMovesRoundTripAndTheGateBoundsTheirKey() throws {
        let g = UUID(uuidString: goal)!
        let good = event(
            GoalMoved(goal: g, placement: .before(UUID(uuidString: anchor)!), key: PositionKey([0x7F, 0x01]), replaces: UUID()))
        #expect(try EventCodec.decode(EventCodec.encode(good)) == good)
        try good.checkWellFormed()
        let renumbering = event(GoalMoved(goal: g, placement: nil, key: PositionKey(Array(repeating: 0x33, count: 32)), replaces: nil))
        #expect(try EventCodec.decode(EventCodec.encode(renumbering)) == renumbering)
        try renumbering.checkWellFormed()

        let hostile: [(GoalMoved, String)] = [
            (GoalMoved(goal: g, placement: .first, key: PositionKey(Array(repeating: 0x33, count: 33)), replaces: nil), "key"),
            (GoalMoved(goal: g, placement: .first, key: PositionKey([0x33, 0x00]), replaces: nil), "key"),
            (GoalMoved(goal: g, placement: .first, key: PositionKey([]), replaces: nil), "key"),
            (GoalMoved(goal: g, placement: .first, key: nil, replaces: nil), "key"),
            (GoalMoved(goal: g, placement: .after(g), key: PositionKey([0x40]), replaces: nil), "after"),
        ]
        for (m, field) in hostile {
            do {
                try event(m).checkWellFormed()
                Issue.record("accepted \(m)")
            } catch {
                #expect(error.field == field, "\(error)")
            }
        }
        // A record whose key claims more than the limit is refused before it is read.
        var bytes = EventCodec.encode(
            event(GoalMoved(goal: g, placement: nil, key: PositionKey(Array(repeating: 1, count: 33)), replaces: nil)))
        #expect(throws: RecordDecodingError.self) { _ = try EventCodec.decode(bytes) }
        bytes = EventCodec.encode(event(GoalMoved(goal: g, placement: nil, key: PositionKey([1]), replaces: nil)))
        #expect(throws: Never.self) { _ = try EventCodec.decode(bytes) }
    }

    /// 0 to 3 digits, a quarter of them zero.
    func randomDigits(_ random: inout SeededRandom) -> [UInt8] {
        var out: [UInt8] = []
        for _ in 0..<Int(random.next() % 4) {
            let zero = random.next() % 4 == 0
            let digit = UInt8(truncatingIfNeeded: random.next())
            out.append(zero ? 0 : digit)
        }
        return out
    }

    @Test func keysBetweenNeighboursSortBetweenThemAndRenumberingSpreadsThem() {
        var random = SeededRandom(seed: 11)
        for _ in 0..<2_000 {
            let a = PositionKey(randomDigits(&random) + [1])
            let b = PositionKey(randomDigits(&random) + [UInt8(1 + random.next() % 255)])
            let (lo, hi) = a < b ? (a, b) : (b, a)
            guard lo != hi, let k = PositionKey.between(lo, hi) else {
                #expect(lo == hi)
                continue
            }
            #expect(lo < k && k < hi && k.bytes.last != 0, "\(lo) \(k) \(hi)")
            let first = PositionKey.between(nil, lo)!
            #expect(first < lo && first.bytes.last != 0)
        }
        #expect(PositionKey.between(PositionKey([5]), PositionKey([5])) == nil)
        // Moving to the end keeps room for goals created later.
        #expect(PositionKey.justAfter(PositionKey([0xFF, 1])) < PositionKey([0xFF, 2]))
        for n in [1, 2, 253, 254, 1_000, 70_000] {
            let keys = PositionKey.spread(n)
            #expect(keys.count == n && zip(keys, keys.dropFirst()).allSatisfy { $0 < $1 })
            #expect(keys.allSatisfy { $0.bytes.count <= 4 && $0.bytes.last != 0 && $0.bytes[0] < 0xFF })
        }
    }
}
