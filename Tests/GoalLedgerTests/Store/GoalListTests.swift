import Foundation
import Testing

@testable import GoalLedger

/// The goal list reads each header without every tag add's id when the goal has no tag
/// removals: its tags are those a full read gives, with and without removals, and its order
/// is the person's.
struct GoalListTests {
    let now = instant("2026-11-05T12:00:00Z")

    @Test func theListsTagsAreTheFullReadsWithAndWithoutRemovals() throws {
        let t = try TemporaryStore()
        let goals = (0..<4).map { _ in UUID() }
        var lines = goals.map { #"{"type":"goalCreated","goal":"\#($0)","title":"G"}"# }
        func tag(_ g: Int, _ name: String, removed: Bool = false) {
            lines.append(#"{"type":"\#(removed ? "tagRemoved" : "tagAdded")","goal":"\#(goals[g])","tag":"\#(name)"}"#)
        }
        // 0: tags added, one twice, none removed; 1: added twice, removed once (what the remover
        // saw: both adds), then added again; 2: one removed of two; 3: no tags.
        tag(0, "run")
        tag(0, "sport")
        tag(0, "run")
        tag(1, "read")
        tag(1, "read")
        tag(1, "read", removed: true)
        tag(2, "a")
        tag(2, "b")
        tag(2, "a", removed: true)
        try t.store.append(try drafts(lines), now: now)
        try t.store.append(try drafts([#"{"type":"tagAdded","goal":"\#(goals[1])","tag":"read"}"#]), now: now)
        let listed = Dictionary(uniqueKeysWithValues: try t.store.reading { try $0.goals(now: now) }.map { ($0.goal.id, $0.goal.tags) })
        for g in goals {
            let full = try #require(try t.store.goal(g))
            #expect(listed[g] == full.tags, "\(g)")
        }
        #expect(listed[goals[0]] == ["run", "sport"])
        #expect(listed[goals[1]] == ["read"])
        #expect(listed[goals[2]] == ["b"])
        #expect(listed[goals[3]] == [])
        // The light read takes the tags as stored, without their adds; the full read every add.
        // A goal with removals is read in full either way.
        try t.store.readTransaction { txn in
            for (g, lightWithoutAdds) in [(goals[0], true), (goals[1], false), (goals[3], true)] {
                let bytes = try #require(try txn.get(try txn.activeProjection().goals, key: g.bytes))
                let light = try bytes.withUnsafeBytes { try ProjectionCodec.decodeHeader($0, id: g, allTagAdds: false) }
                let full = try bytes.withUnsafeBytes { try ProjectionCodec.decodeHeader($0, id: g) }
                #expect(light.tagAdds.isEmpty == lightWithoutAdds && (light.listedTags != nil) == lightWithoutAdds)
                #expect(light.tags == full.tags)
            }
            let bytes = try #require(try txn.get(try txn.activeProjection().goals, key: goals[0].bytes))
            #expect(try bytes.withUnsafeBytes { try ProjectionCodec.decodeHeader($0, id: goals[0]) }.tagAdds[NormalizedText("run")]?.count == 2)
        }
    }

    /// Tags added in any order, with letters outside ASCII (some decomposed), list in the order
    /// of their UTF-8 bytes, as the full read does.
    @Test func tagsOutsideASCIIListInTheFullReadsOrder() throws {
        let t = try TemporaryStore()
        let goal = UUID()
        let names = ["zebra", "Zebra", "\u{E9}t\u{E9}", "e\u{301}cole", "\u{1F3C3}", "apple", "\u{DF}", "a"]
        var lines = [#"{"type":"goalCreated","goal":"\#(goal)","title":"G"}"#]
        for name in names.reversed() { lines.append(#"{"type":"tagAdded","goal":"\#(goal)","tag":"\#(name)"}"#) }
        try t.store.append(try drafts(lines), now: now)
        let listed = try #require(try t.store.reading { try $0.goals(now: now, includingEntries: false) }.first)
        let full = try #require(try t.store.goal(goal))
        #expect(listed.goal.tags == full.tags)
        #expect(full.tags == names.map { NormalizedText($0) }.sorted().map(\.value))
        #expect(full.tags.count == names.count)
    }

    /// A row whose tags are out of order or repeated (a damaged or foreign row) is read in full,
    /// so the list's tags are still sorted and each once.
    @Test func aRowWithTagsOutOfOrderOrRepeatedIsReadInFull() throws {
        for stored in [["b", "a"], ["a", "a"], ["a", "c", "b"], ["a", "b"]] {
            var w = ByteWriter(capacity: 64)
            w.u8(ProjectionCodec.version)
            w.u8(0)
            w.varint(0)  // no registers
            w.varint(UInt64(stored.count))
            for tag in stored {
                w.string(tag)
                w.varint(1)
                w.uuid(UUID())
            }
            w.varint(0)  // no removals
            w.varint(0)  // no deletion heads
            let light = try w.bytes.withUnsafeBytes { try ProjectionCodec.decodeHeader($0, id: UUID(), allTagAdds: false) }
            let full = try w.bytes.withUnsafeBytes { try ProjectionCodec.decodeHeader($0, id: UUID()) }
            #expect(light.tags == full.tags, "\(stored)")
            #expect(light.tags == Array(Set(stored)).sorted(), "\(stored)")
            #expect((light.listedTags != nil) == (stored == ["a", "b"]), "\(stored)")
        }
    }

    /// The list's sort (by each key's first 8 bytes, then whole keys) gives the order of the
    /// keys themselves: keys that share 8 bytes or more, keys one a prefix of another, keys that
    /// pad equal with zeros, equal keys told apart by their stamps or goals.
    @Test func theListsSortIsTheOrderOfTheKeys() {
        var random = SeededRandom(seed: 37)
        let alphabet: [UInt8] = [0x00, 0x01, 0x7F, 0x80, 0xFF]
        let devices = ["a", "b", "\u{E9}"]
        for round in 0..<40 {
            let keys = (0..<(round * 7 + 1)).map { _ -> GoalOrderKey in
                let length = Int.random(in: 1...12, using: &random)
                let bytes = (0..<length).map { _ in alphabet.randomElement(using: &random)! }
                let stamp = Stamp(
                    key: CanonicalKey(hlc: HLC(rawValue: UInt64.random(in: 0...2, using: &random)), device: devices.randomElement(using: &random)!),
                    event: UUID())
                return GoalOrderKey(key: PositionKey(bytes), stamp: stamp, goal: UUID())
            }
            let model = keys.indices.sorted { keys[$0] < keys[$1] }
            #expect(GoalOrderKey.sortedIndices(keys) == model, "round \(round)")
        }
        // Equal keys (the same goal listed twice) keep their places.
        let one = GoalOrderKey(key: PositionKey([1]), stamp: Stamp(key: CanonicalKey(hlc: HLC(rawValue: 1), device: "a"), event: UUID()), goal: UUID())
        #expect(GoalOrderKey.sortedIndices([one, one, one]) == [0, 1, 2])
    }
}
