import Foundation
import GoalLedger
import Testing

/// The README's library sample, compiled and run; the test checks that the README shows
/// exactly these lines.
struct ReadmeExampleTests {
    static func readmeExample(path: String, lines: [String], now: Instant) throws -> (GoalView, UUID) {
        // README begin
        let store = try LedgerStore.create(at: path, device: "phone")
        let water = try store.write { writer in  // one transaction: its calls commit together or not at all
            let water = try writer.createGoal(
                title: "Drink water", cadence: .daily, progress: .measurable(target: try .target(2), unit: "l"), now: now)
            try writer.recordProgress(water, amount: try Amount(0.5), now: now)  // one checked event; `now:` defaults to the clock
            return water
        }
        let rows = try store.read { try $0.goals(now: now) }  // [GoalSnapshot]: the Goal and its GoalView, Codable
        for row in rows { print(row.goal.title, row.view.value ?? .zero, row.view.completed) }
        let drafts = try lines.enumerated().map { try EventDraft(line: $1, number: $0 + 1) }  // JSON lines
        do {
            _ = try store.write { try $0.append(drafts, now: now) }  // [AppendResult]
        } catch let error as LedgerError {
            print(error.message)  // names the line and the field; nothing was written
            if case .unknownGoal(let goal, _, _)? = error.reason { print("no goal \(goal)") }
        }
        let (state, projection) = try store.read { snapshot in  // both from one consistent state
            (try snapshot.goalState(water), try snapshot.replay())  // the fold's registers; GoalProjection: goals, devices, digest
        }
        var feed = ChangeFeed(store: store, after: 0)
        for change in try feed.next() { print(change) }  // then persist feed.checkpoint
        let view = GoalView(goal: state, calendar: projection.device("phone").calendar, now: now)
        // README end
        return (view, water)
    }

    @Test func theReadmeSampleRunsAndIsTheREADMEsText() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-readme-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let now = Instant(rfc3339: "2026-11-02T07:00:00Z")!
        let lines = [#"{"type":"tagAdded","goal":"\#(UUID().uuidString)","tag":"x"}"#]
        let (view, _) = try Self.readmeExample(path: dir + "/store", lines: lines, now: now)
        #expect(view.value?.description == "0.5")

        // The README's block is these lines.
        try Self.expectShown(in: "README.md", after: "```swift\nimport GoalLedger\n", matches: "README")
    }

    /// The sample of the article "Following one event".
    static func followingOneEvent(path: String, goal: UUID, now: Instant) throws -> [AppendResult] {
        // Article begin
        let store = try LedgerStore.open(at: path)
        let line = #"{"type":"progressRecorded","goal":"\#(goal.uuidString)","amount":2.5}"#
        let draft = try EventDraft(line: line, number: 1)
        let results = try store.write { try $0.append([draft], now: now) }
        // Article end
        return results
    }

    @Test func theFollowingOneEventSampleRunsAndIsTheArticlesText() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-article-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let now = Instant(rfc3339: "2026-11-02T07:00:00Z")!
        let goal: UUID
        do {
            let store = try LedgerStore.create(at: dir + "/store", device: "phone")
            goal = try store.createGoal(title: "Run", progress: .measurable(target: try Amount(10)), now: now)
        }
        let results = try Self.followingOneEvent(path: dir + "/store", goal: goal, now: now)
        #expect(results.count == 1 && !results[0].duplicate)

        try Self.expectShown(in: "Sources/GoalLedger/GoalLedger.docc/FollowingOneEvent.md", after: "```swift\n", matches: "Article")
    }

    /// The samples of the store article's "Reading and writing", with `store`, `goal` and `now`
    /// as inputs (the article's third sample is a SwiftUI button).
    static func readingAndWriting(store: LedgerStore, goal: UUID, now: Instant) throws -> (Int, String, UUID) {
        // Store begin
        let list = try store.read { try $0.goals(now: now, includingEntries: false) }
        let (goals, digest) = try store.read { snapshot in
            (try snapshot.goals(now: now), try snapshot.digest())
        }
        _ = try store.write { try $0.recordProgress(goal, amount: try Amount(0.5), now: now) }
        // Store end
        #expect(list.count == goals.count)
        let read = try Self.composedWrite(store: store, now: now)
        return (goals.count, digest, read)
    }

    static func composedWrite(store: LedgerStore, now: Instant) throws -> UUID {
        // Composed begin
        let goal = try store.write { writer in
            let goal = try writer.createGoal(title: "Read", cadence: .daily, now: now)
            try writer.setReminder(goal, at: try ReminderTime(hour: 20, minute: 0), now: now)
            return goal
        }
        // Composed end
        return goal
    }

    @Test func theStoreArticlesSamplesRunAndAreItsText() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-store-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let now = Instant(rfc3339: "2026-11-02T07:00:00Z")!
        let store = try LedgerStore.create(at: dir + "/store", device: "phone")
        let water = try store.write { try $0.createGoal(title: "Water", progress: .measurable(target: try Amount(2)), now: now) }
        let (count, digest, read) = try Self.readingAndWriting(store: store, goal: water, now: now)
        #expect(count == 1 && !digest.isEmpty)
        let state = try store.read { try $0.goalState(read) }
        #expect(state.title?.value == "Read" && state.reminder?.value != nil, "both calls of the composed write committed")

        let article = "Sources/GoalLedger/GoalLedger.docc/TheStore.md"
        try Self.expectShown(in: article, after: "each lent to a closure:\n\n```swift\n", matches: "Store")
        try Self.expectShown(in: article, after: "for the second:\n\n  ```swift\n", matches: "Composed")
    }

    /// Expects the first code block of `file` (a path in the package) that starts with `opening`
    /// to show exactly the lines of this file between `// <marker> begin` and `// <marker> end`
    /// (blank lines and indentation aside).
    static func expectShown(in file: String, after opening: String, matches marker: String) throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let text = try String(contentsOf: root.appendingPathComponent(file), encoding: .utf8)
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        func trimmed(_ text: Substring) -> [String] {
            text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }
        let block = try #require(text.range(of: opening))
        let end = try #require(text.range(of: "```", range: block.upperBound..<text.endIndex))
        let begin = try #require(source.range(of: "// \(marker) begin\n"))
        let stop = try #require(source.range(of: "// \(marker) end", range: begin.upperBound..<source.endIndex))
        #expect(trimmed(text[block.upperBound..<end.lowerBound]) == trimmed(source[begin.upperBound..<stop.lowerBound]), "\(file)")
    }
}
