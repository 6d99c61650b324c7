import Foundation
import Testing

@testable import GoalLedger

/// Pins the bytes of every stored layout: each event type in each variant (every enum code,
/// optional fields present and absent, every codec version) and each projection row. The file
/// `records.golden` holds the bytes; every run decodes them, checks the decoded value, and
/// encodes it again. A changed code, field order or layout fails here, loudly, instead of
/// silently changing what old stores mean. After an intended change of layout (a new codec or
/// projection version, never an edit of an old one), regenerate the file with
/// `LEDGER_WRITE_GOLDEN=1 swift test --filter GoldenRecordTests` and review the diff.
struct GoldenRecordTests {
    static let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("records.golden")

    static func id(_ n: Int) -> UUID { UUID(uuidString: String(format: "00000000-0000-4000-8000-%012d", n))! }
    static let goal = id(1)
    static let at = Instant(milliseconds: 1_793_602_800_123)

    static func event(_ n: Int, _ payload: Payload, origin: String = "phone", deletionsSeen: [String: UInt64]? = nil) -> Event {
        Event(
            id: id(100 + n), origin: origin, sequence: UInt64(n), hlc: HLC(milliseconds: at.milliseconds + Int64(n), counter: UInt16(n)),
            at: at, schema: 2, payload: payload, deletionsSeen: deletionsSeen)
    }

    /// Every event variant, by name.
    static var events: [(String, Event)] {
        var out: [(String, Event)] = []
        func add(_ name: String, _ payload: Payload, deletionsSeen: [String: UInt64]? = nil) {
            out.append((name, event(out.count + 1, payload, deletionsSeen: deletionsSeen)))
        }
        for cadence in Cadence.allCases {
            add("goalCreated.minimal.\(cadence)", .goalCreated(GoalCreated(goal: goal, title: "Run", cadence: cadence)))
        }
        add(
            "goalCreated.full",
            .goalCreated(
                GoalCreated(
                    goal: goal, title: "Read é", details: "d", cadence: .weekly, targetDate: Day(iso: "2027-05-31"),
                    progressKind: .measurable, target: try! Amount("20.5"), unit: "pages", reminder: ReminderTime(unchecked: 7, 45),
                    tags: ["books", "e\u{301}"])))
        add(
            "goalEdited.set",
            .goalEdited(
                GoalEdited(
                    goal: goal, title: "T", details: .some("D"), cadence: .monthly, targetDate: .some(Day(iso: "2027-01-31")), target: try! Amount("3"),
                    unit: .some("km"),
                    replaces: [.title: id(2), .details: id(3), .cadence: id(4), .targetDate: id(5), .target: id(6), .unit: id(7)])))
        add("goalEdited.cleared", .goalEdited(GoalEdited(goal: goal, details: .some(nil), targetDate: .some(nil), unit: .some(nil))))
        add("goalEdited.yearly", .goalEdited(GoalEdited(goal: goal, cadence: .yearly)))
        add("goalDeleted", .goalDeleted(GoalRegisterWrite(goal: goal, replaces: id(2), seen: ["phone": 4, "tablet": 9])))
        add("goalDeleted.minimal", .goalDeleted(GoalRegisterWrite(goal: goal)))
        add("goalRestored", .goalRestored(GoalRegisterWrite(goal: goal, replaces: id(3))), deletionsSeen: ["phone": 5])
        add("reminderSet", .reminderSet(ReminderSet(goal: goal, hour: 23, minute: 59, replaces: id(4))))
        add("reminderCleared", .reminderCleared(GoalRegisterWrite(goal: goal, replaces: id(5))))
        add(
            "progressRecorded.amount",
            .progressRecorded(ProgressRecorded(goal: goal, amount: try! Amount("-1e12"), occurredAt: at, day: Day(iso: "2026-11-02"))))
        add(
            "progressRecorded.completed",
            .progressRecorded(ProgressRecorded(goal: goal, completed: true, occurredAt: at, day: Day(iso: "1970-01-01"))),
            deletionsSeen: [:])
        add(
            "progressRecorded.deletionsSeen",
            .progressRecorded(ProgressRecorded(goal: goal, completed: false, occurredAt: at, day: Day(iso: "9999-12-31"))),
            deletionsSeen: ["phone": 3, "tablet": 1])
        add("progressRemoved", .progressRemoved(ProgressRemoved(goal: goal, entry: id(6))))
        add("tagAdded", .tagAdded(TagAdded(goal: goal, tag: "\u{E9}")))
        add("tagRemoved", .tagRemoved(TagRemoved(goal: goal, tag: "e\u{301}", observed: [id(7), id(8)])))
        for strategy in NotificationStrategy.allCases {
            add(
                "deviceConfigured.\(strategy)",
                .deviceConfigured(
                    DeviceConfigured(
                        timeZone: "Asia/Tokyo", firstWeekday: 2, locale: "ja_JP", strategy: strategy, windowDays: 30, capacity: 512)))
        }
        for status in AuthorizationStatus.allCases {
            add("notificationAuthorization.\(status)", .notificationAuthorization(NotificationAuthorization(status: status)))
        }
        add(
            "progressHistoryReplaced",
            .progressHistoryReplaced(
                ProgressHistoryReplaced(
                    goal: goal,
                    entries: [
                        HistoryEntry(id: id(9), amount: try! Amount("2"), occurredAt: at, day: Day(iso: "2026-11-02")),
                        HistoryEntry(id: id(10), completed: true, occurredAt: at),
                    ], base: id(11))))
        // Added after the others, so that the records above keep their bytes.
        add(
            "reminderSet.devices",
            .reminderSet(ReminderSet(goal: goal, hour: 6, minute: 5, replaces: id(4), devices: ["phone", "watch.2"])))
        add("deviceEnrolled", .deviceEnrolled(DeviceEnrolled(device: "tablet", publicKey: Array(0..<32), from: 1)))
        add("deviceRevoked", .deviceRevoked(DeviceRevoked(device: "tablet", after: 42)))
        // A chained event, and a signed one (the last of a batch): fixed bytes stand in for the
        // hash, key and signature, whose layout is what is pinned here.
        var chained = event(out.count + 1, .tagAdded(TagAdded(goal: goal, tag: "x")), deletionsSeen: [:])
        chained.previousHash = Array(repeating: 0xA5, count: 32)
        out.append(("tagAdded.chained", chained))
        var signed = event(out.count + 1, .tagAdded(TagAdded(goal: goal, tag: "y")), deletionsSeen: ["tablet": 2])
        signed.previousHash = Array(repeating: 0x5A, count: 32)
        signed.signer = Array(repeating: 0x11, count: 32)
        signed.signature = Array(repeating: 0x22, count: 64)
        out.append(("tagAdded.signed", signed))
        // Added after the others too. A reminder's weekday: a new presence bit and one byte, only when chosen.
        add(
            "goalCreated.weekday",
            .goalCreated(
                GoalCreated(
                    goal: goal, title: "Swim", cadence: .weekly, reminder: ReminderTime(unchecked: 8, 15, weekday: 7),
                    reminderDevices: ["phone"])))
        add("reminderSet.weekday", .reminderSet(ReminderSet(goal: goal, hour: 18, minute: 0, weekday: 1, replaces: id(12))))
        add("goalMoved", .goalMoved(GoalMoved(goal: goal, placement: .after(id(12)), key: PositionKey([0x7F, 0x01]), replaces: id(2))))
        add("goalMoved.first", .goalMoved(GoalMoved(goal: goal, placement: .first, key: PositionKey([0x40]), replaces: nil)))
        add("goalMoved.last", .goalMoved(GoalMoved(goal: goal, placement: .last, key: PositionKey([0xFF, 1, 2, 3, 4, 5, 6, 7, 8]), replaces: nil)))
        add("goalMoved.before", .goalMoved(GoalMoved(goal: goal, placement: .before(id(13)), key: PositionKey([0x01]), replaces: id(3))))
        add("goalMoved.renumbering", .goalMoved(GoalMoved(goal: goal, placement: nil, key: PositionKey([0x01, 0xFC]), replaces: id(4))))
        return out
    }

    /// Projection rows, by name: goal headers folded from events, and device rows.
    static var rows: [(String, [UInt8])] {
        // The weekday variants fold into their own header, so the others keep their bytes.
        let all = events.filter { !$0.0.hasSuffix(".weekday") }.map(\.1)
        var weekly = GoalState(id: goal)
        for (name, e) in events where name.hasSuffix(".weekday") { weekly.apply(e) }
        var measurable = GoalState(id: goal)
        for e in all where e.payload.goal != nil && e.type != .progressHistoryReplaced { measurable.apply(e) }
        var minimal = GoalState(id: goal)
        minimal.apply(all[0])
        var device = DeviceState(name: "phone")
        for e in all where e.payload.goal == nil { device.apply(e) }
        return [
            ("header.full", ProjectionCodec.encodeHeader(measurable)),
            ("header.minimal", ProjectionCodec.encodeHeader(minimal)),
            ("header.weekday", ProjectionCodec.encodeHeader(weekly)),
            ("device.full", ProjectionCodec.encodeDevice(device)),
            ("device.empty", ProjectionCodec.encodeDevice(DeviceState(name: "watch"))),
        ] + entryRows + (ReminderFacts(measurable).map { [("reminders.full", PendingTable.encode($0))] } ?? [])
            + (ReminderFacts(weekly).map { [("reminders.weekday", PendingTable.encode($0))] } ?? [])
    }

    /// Rows of the entries table: key, then value, for an amount, a completion, a completion
    /// refused, and a history write (its value is its event's canonical key).
    static var entryRows: [(String, [UInt8])] {
        entries.sorted { $0.key < $1.key }.flatMap { name, e in
            [("entries.\(name).key", PendingTable.entryKey(goal: goal, e)), ("entries.\(name).value", PendingTable.entryValue(e))]
        } + [
            ("entries.history.key", PendingTable.entryKey(goal: goal, day: PendingTable.historyDay, event: id(904))),
            ("entries.history.value", PendingTable.historyValue(CanonicalKey(hlc: HLC(rawValue: UInt64(1_793_602_800_000) << 16 | 4), device: "tablet"))),
        ]
    }

    static var entries: [String: ProgressEntry] {
        let at = Instant(milliseconds: 1_793_602_800_000)
        let entries = [
            ("amount", ProgressEntry(id: id(901), amount: try! Amount("2.5"), completed: nil, occurredAt: at, day: Day(iso: "2026-11-02")!, device: "phone", hlc: HLC(rawValue: 7))),
            ("completed", ProgressEntry(id: id(902), amount: nil, completed: true, occurredAt: at, day: Day(iso: "2026-11-01")!, device: "tablet", hlc: HLC(rawValue: 8))),
            ("wholeAmount", ProgressEntry(id: id(905), amount: try! Amount("-3"), completed: nil, occurredAt: Instant(milliseconds: 1_793_602_799_000), day: Day(iso: "2026-11-02")!, device: "phone", hlc: HLC(rawValue: UInt64(1_793_602_800_000) << 16 | 3))),
            ("notCompleted", ProgressEntry(id: id(903), amount: nil, completed: false, occurredAt: Instant(milliseconds: 0), day: Day(iso: "1970-01-01")!, device: "w", hlc: HLC(rawValue: 9))),
        ]
        return Dictionary(uniqueKeysWithValues: entries)
    }

    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }
    static func bytes(_ hex: Substring) -> [UInt8] {
        var out: [UInt8] = []
        var i = hex.startIndex
        while i < hex.endIndex {
            let j = hex.index(i, offsetBy: 2)
            out.append(UInt8(hex[i..<j], radix: 16)!)
            i = j
        }
        return out
    }

    static func current() -> [(String, [UInt8])] {
        events.map { ("event." + $0.0, EventCodec.encode($0.1)) } + rows.map { ("row." + $0.0, $0.1) }
    }

    static func golden() throws -> [String: [UInt8]] {
        let text = try String(contentsOf: file, encoding: .utf8)
        var out: [String: [UInt8]] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            let parts = line.split(separator: " ")
            out[String(parts[0])] = bytes(parts[1])
        }
        return out
    }

    @Test func storedBytesMatchTheGoldenRecords() throws {
        let current = Self.current()
        if ProcessInfo.processInfo.environment["LEDGER_WRITE_GOLDEN"] == "1" {
            let lines =
                ["# name hex: the stored bytes of each layout (see GoldenRecordTests.swift)"] + current.map { "\($0.0) \(Self.hex($0.1))" }
            try (lines.joined(separator: "\n") + "\n").write(to: Self.file, atomically: true, encoding: .utf8)
        }
        let golden = try Self.golden()
        #expect(Set(golden.keys) == Set(current.map(\.0)), "variants added or removed: regenerate records.golden and review")
        for (name, bytes) in current {
            #expect(
                golden[name] == bytes,
                "\(name): the encoding changed\n  golden  \(golden[name].map(Self.hex) ?? "none")\n  now     \(Self.hex(bytes))")
        }
    }

    /// A new event type is pinned from its first version: it needs a variant here.
    @Test func everyEventTypeHasAGoldenVariant() {
        let covered = Set(Self.events.map(\.1.type))
        #expect(EventType.allCases.filter { !covered.contains($0) }.map(\.name) == [], "add a variant to `events`")
    }

    @Test func goldenEventsDecodeToTheirVariantAndEncodeBackToTheSameBytes() throws {
        let golden = try Self.golden()
        for (name, event) in Self.events {
            guard let bytes = golden["event." + name] else { continue }
            let decoded: Event
            do { decoded = try EventCodec.decode(bytes) } catch {
                Issue.record("\(name): \(error)")
                continue
            }
            #expect(decoded == event, "\(name) decodes to another event")
            #expect(EventCodec.encode(decoded) == bytes, "\(name) does not encode back to its bytes")
        }
        for (name, _) in Self.rows where name.hasPrefix("header") {
            guard let bytes = golden["row." + name] else { continue }
            let state = try bytes.withUnsafeBytes { try ProjectionCodec.decodeHeader($0, id: Self.goal) }
            #expect(ProjectionCodec.encodeHeader(state) == bytes, "\(name) does not encode back to its bytes")
        }
        for name in ["amount", "wholeAmount", "completed", "notCompleted"] {
            guard let key = golden["row.entries.\(name).key"], let value = golden["row.entries.\(name).value"] else { continue }
            let entry = try key.withUnsafeBytes { k in try value.withUnsafeBytes { v in try PendingTable.entry(key: k, value: v) } }
            #expect(entry.map(PendingTable.entryValue) == value && entry.map { PendingTable.entryKey(goal: Self.goal, $0) } == key, "entries.\(name)")
            #expect(entry == Self.entries[name], "entries.\(name) decodes to another entry")
        }
        for (name, _) in Self.rows where name.hasPrefix("device") {
            guard let bytes = golden["row." + name] else { continue }
            let state = try bytes.withUnsafeBytes { try ProjectionCodec.decodeDevice($0, name: "phone") }
            #expect(ProjectionCodec.encodeDevice(state) == bytes, "\(name) does not encode back to its bytes")
        }
    }
}
