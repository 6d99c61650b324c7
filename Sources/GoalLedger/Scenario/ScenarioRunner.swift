import Foundation

/// What running a scenario found.
public struct ScenarioReport: Sendable {
    public var name: String
    public var steps = 0
    public var checks = 0
    public var failures: [String] = []
    public var passed: Bool { failures.isEmpty }
}

/// Runs scenarios on stores of their own in a directory.
public enum ScenarioRunner {
    /// Runs `scenario` with its stores under `directory` (which must exist and be empty).
    public static func run(_ scenario: Scenario, in directory: String) throws(LedgerError) -> ScenarioReport {
        var report = ScenarioReport(name: scenario.name)
        var stores: [String: LedgerStore] = [:]
        let first = scenario.devices[0]
        let origin = try LedgerStore.create(at: directory + "/" + first.name, device: first.name)
        stores[first.name] = origin
        for d in scenario.devices.dropFirst() {
            stores[d.name] = try origin.clone(to: directory + "/" + d.name, device: d.name)
        }
        for d in scenario.devices {
            var setup: [EventDraft] = []
            if let c = d.configuration { setup.append(EventDraft(at: scenario.start, payload: .deviceConfigured(c))) }
            if let a = d.authorization { setup.append(EventDraft(at: scenario.start, payload: .notificationAuthorization(NotificationAuthorization(status: a)))) }
            if !setup.isEmpty { try stores[d.name]!.append(setup, now: scenario.start) }
        }
        var clock = scenario.start
        for (index, step) in scenario.steps.enumerated() {
            report.steps += 1
            let label = "steps[\(index)]"
            switch step {
            case .append(let device, let at, let events, let expectError):
                clock = max(clock, at)
                do throws(LedgerError) {
                    try stores[device]!.append(events, now: at)
                    if let expectError {
                        report.failures.append("\(label): append on \(device): expected exit \(expectError), found success")
                    }
                } catch {
                    if let expectError {
                        report.checks += 1
                        if error.code.exitCode != expectError {
                            report.failures.append("\(label): append on \(device): expected exit \(expectError), found exit \(error.code.exitCode): \(error.message)")
                        }
                    } else {
                        report.failures.append("\(label): append on \(device) failed: \(error.message)")
                    }
                }
            case .sync(let a, let b):
                _ = try stores[a]!.sync(with: stores[b]!)
            case .reconcile(let device, let at, let full):
                clock = max(clock, at)
                report.failures += try ScenarioHooks.reconcile(stores[device]!, at: at, full: full, label: label)
            case .expect(let x):
                report.failures += try check(x, stores: stores, now: x.now ?? clock, checks: &report.checks)
            }
        }
        return report
    }

    static func check(_ x: Scenario.Expectation, stores: [String: LedgerStore], now: Instant, checks: inout Int) throws(LedgerError) -> [String] {
        var failures: [String] = []
        func expect(_ what: String, _ expected: JSONValue, _ found: JSONValue) {
            checks += 1
            if expected != found {
                failures.append("\(x.label): \(what): expected \(JSONWriter.string(expected)), found \(JSONWriter.string(found))")
            }
        }
        let device = x.device.map { stores[$0]! }
        let on = x.device.map { "device \($0)" } ?? ""
        if let store = device, let goal = x.goal {
            let state = try store.goalState(goal)
            let json = state.json
            let about = "\(on) goal \(goal.uuidString)"
            if let exists = x.exists { expect("\(about) exists", .bool(exists), .bool(state.exists)) }
            if state.exists || x.exists == nil {
                for (key, value) in x.facts { expect("\(about) \(key)", value, json[key] ?? .null) }
                if let entries = x.entries {
                    expect("\(about) entries", .array(entries.map { .string($0.uuidString) }.sorted { JSONWriter.string($0) < JSONWriter.string($1) }),
                           .array(state.entries.map { .string($0.id.uuidString) }.sorted { JSONWriter.string($0) < JSONWriter.string($1) }))
                }
                if let count = x.entryCount { expect("\(about) entry count", .number(Double(count)), .number(Double(state.entries.count))) }
                if x.periodValue != nil || x.completed != nil {
                    let view = GoalView(goal: state, calendar: try store.deviceState(store.device).calendar, now: now).json
                    if let v = x.periodValue { expect("\(about) period value at \(now)", v, view["value"] ?? .null) }
                    if let c = x.completed { expect("\(about) completed at \(now)", .bool(c), view["completed"] ?? .null) }
                }
            }
        }
        if let store = device, let expected = x.conflicts {
            let found = try store.conflicts(goal: x.goal)
            func describe(_ c: Scenario.ExpectedConflict) -> JSONValue {
                .object([("goal", .string(c.goal.uuidString)), ("field", .string(c.field)), ("winner", .string(c.winner)),
                         ("overwritten", .array(c.overwritten.sorted().map { .string($0) }))])
            }
            let foundShort = found.map { Scenario.ExpectedConflict(goal: $0.goal, field: $0.field, winner: $0.winner.device, overwritten: $0.overwritten.map(\.device)) }
            expect("\(on) conflicts", .array(expected.map(describe)), .array(foundShort.map(describe)))
        }
        if let names = x.converged {
            let replays = try names.map { (n) throws(LedgerError) in try stores[n]!.replay() }
            let texts = replays.map { JSONWriter.string(.object([("position", .number(Double($0.position))), ("goals", $0.canonicalJSON)])) }
            checks += 1
            if Set(texts).count != 1 {
                let digests = zip(names, replays).map { "\($0) \($1.digest.prefix(12)) (\($1.position) events)" }.joined(separator: ", ")
                failures.append("\(x.label): converged \(names.joined(separator: ", ")): expected identical replays, found \(digests)")
            }
        }
        if let store = device {
            failures += try ScenarioHooks.checkReminders(x, store: store, now: now, checks: &checks)
        }
        return failures
    }
}

/// Reminder steps and checks; the reminders engine provides them.
enum ScenarioHooks {
    static func reconcile(_ store: LedgerStore, at: Instant, full: Bool, label: String) throws(LedgerError) -> [String] {
        ["\(label): reconcile is not available in this version of the ledger"]
    }

    static func checkReminders(_ x: Scenario.Expectation, store: LedgerStore, now: Instant, checks: inout Int) throws(LedgerError) -> [String] {
        if x.pending != nil || x.center != nil || x.issues != nil {
            return ["\(x.label): reminder expectations are not available in this version of the ledger"]
        }
        return []
    }
}
