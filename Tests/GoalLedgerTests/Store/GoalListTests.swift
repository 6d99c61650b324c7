import Foundation
import Testing

@testable import GoalLedger

/// The goal list reads each header without every tag add's id when the goal has no tag
/// removals: its tags are those a full read gives, with and without removals.
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
        // The light read holds one add per tag; the full read every one.
        try t.store.readTransaction { txn in
            let bytes = try #require(try txn.get(try txn.activeProjection().goals, key: goals[0].bytes))
            let light = try bytes.withUnsafeBytes { try ProjectionCodec.decodeHeader($0, id: goals[0], allTagAdds: false) }
            let full = try bytes.withUnsafeBytes { try ProjectionCodec.decodeHeader($0, id: goals[0]) }
            #expect(light.tagAdds[NormalizedText("run")]?.count == 1 && full.tagAdds[NormalizedText("run")]?.count == 2)
            #expect(light.tags == full.tags)
        }
    }
}
