import Foundation
import GoalLedger
import LedgerFileCenter

/// What running a scenario found.
package struct ScenarioReport: Sendable {
    public var name: String
    public var steps = 0
    public var checks = 0
    public var failures: [String] = []
    public var passed: Bool { failures.isEmpty }
}

/// A hub that scenario devices sync through (the runner knows nothing of how it is reached).
package protocol ScenarioHub {
    func sync(_ store: LedgerStore) throws(LedgerError) -> SyncResult
}

/// Runs scenarios on stores of their own in a directory.
package enum ScenarioRunner {
    /// Runs `scenario` with its stores under `directory` (which must exist and be empty).
    ///
    /// With `hub`, every sync goes through it: a sync of two devices becomes the first, the
    /// second, then the first again syncing with the hub, so both end up with the union, as a
    /// store-to-store sync leaves them. Without it, a scenario's `"hub"` is a store that relays.
    public static func run(_ scenario: Scenario, in directory: String, hub: (any ScenarioHub)? = nil) throws(LedgerError)
        -> ScenarioReport
    {
        var report = ScenarioReport(name: scenario.name)
        var stores: [String: LedgerStore] = [:]
        let first = scenario.devices[0]
        let origin = try LedgerStore.create(at: directory + "/" + first.name, device: first.name, schema: scenario.schema)
        stores[first.name] = origin
        for d in scenario.devices.dropFirst() {
            stores[d.name] = try origin.clone(to: directory + "/" + d.name, device: d.name, now: scenario.start)
        }
        for d in scenario.devices {
            var setup: [EventDraft] = []
            if let c = d.configuration { setup.append(EventDraft(at: scenario.start, payload: .deviceConfigured(c))) }
            if let a = d.authorization {
                setup.append(EventDraft(at: scenario.start, payload: .notificationAuthorization(NotificationAuthorization(status: a))))
            }
            if !setup.isEmpty { try stores[d.name]!.writing { try $0.append(setup, now: scenario.start) } }
        }
        var relay: LedgerStore?
        if scenario.hasHub, hub == nil {
            relay = try origin.clone(to: directory + "/" + Scenario.hubName + ".relay", device: Scenario.hubName, now: scenario.start)
        }
        func syncWithHub(_ device: String) throws(LedgerError) {
            if let hub {
                _ = try hub.sync(stores[device]!)
            } else if let relay {
                _ = try stores[device]!.sync(with: relay)
            }
        }
        var clock = scenario.start
        var lastReports: [String: ReconcileReport] = [:]
        for (index, step) in scenario.steps.enumerated() {
            report.steps += 1
            let label = "steps[\(index)]"
            switch step {
            case .append(let device, let at, let events, let expectError):
                clock = max(clock, at)
                do throws(LedgerError) {
                    try stores[device]!.writing { try $0.append(events, now: at) }
                    if let expectError {
                        report.failures.append("\(label): append on \(device): expected exit \(expectError), found success")
                    }
                } catch {
                    if let expectError {
                        report.checks += 1
                        if error.code.exitCode != expectError {
                            report.failures.append(
                                "\(label): append on \(device): expected exit \(expectError), found exit \(error.code.exitCode): \(error.message)"
                            )
                        }
                    } else {
                        report.failures.append("\(label): append on \(device) failed: \(error.message)")
                    }
                }
            case .sync(let a, let b) where a == Scenario.hubName || b == Scenario.hubName:
                try syncWithHub(a == Scenario.hubName ? b : a)
            case .sync(let a, let b):
                if hub != nil {
                    for d in [a, b, a] { try syncWithHub(d) }
                } else {
                    _ = try stores[a]!.sync(with: stores[b]!)
                }
            case .migrate(let device):
                _ = try stores[device]!.migrate(now: clock)
            case .reconcile(let device, let at, let full):
                clock = max(clock, at)
                lastReports[device] = try ScenarioHooks.reconcile(stores[device]!, at: at, full: full)
            case .expect(let x):
                report.failures += try check(x, stores: stores, now: x.now ?? clock, lastReports: lastReports, checks: &report.checks)
            }
        }
        return report
    }

    static func check(
        _ x: Scenario.Expectation, stores: [String: LedgerStore], now: Instant, lastReports: [String: ReconcileReport],
        checks: inout Int
    ) throws(LedgerError) -> [String] {
        var failures: [String] = []
        func expect(_ what: String, _ expected: JSONValue, _ found: JSONValue) {
            checks += 1
            if expected != found {
                failures.append("\(x.label): \(what): expected \(JSONWriter.message(expected)), found \(JSONWriter.message(found))")
            }
        }
        let device = x.device.map { stores[$0]! }
        let on = x.device.map { "device \($0)" } ?? ""
        if let store = device, let goal = x.goal {
            let state = try store.reading { try $0.goalState(goal) }
            let json = state.json
            let about = "\(on) goal \(goal.uuidString)"
            if let exists = x.exists { expect("\(about) exists", .bool(exists), .bool(state.exists)) }
            if state.exists || x.exists == nil {
                for (key, value) in x.facts { expect("\(about) \(key)", value, json[key] ?? .null) }
                if let entries = x.entries {
                    expect(
                        "\(about) entries",
                        .array(entries.sorted(by: UUID.precedes).map { .string($0.uuidString) }),
                        .array(state.entries.map(\.id).sorted(by: UUID.precedes).map { .string($0.uuidString) }))
                }
                if let count = x.entryCount { expect("\(about) entry count", .number(Double(count)), .number(Double(state.entries.count))) }
                if x.periodValue != nil || x.completed != nil {
                    let view = GoalView(goal: state, calendar: try store.reading { try $0.deviceState(store.device) }.calendar, now: now)
                        .json
                    if let v = x.periodValue { expect("\(about) period value at \(now)", v, view["value"] ?? .null) }
                    if let c = x.completed { expect("\(about) completed at \(now)", .bool(c), view["completed"] ?? .null) }
                }
            }
        }
        if let store = device, let expected = x.conflicts {
            let found = try store.reading { try $0.conflicts(goal: x.goal) }
            func describe(_ c: Scenario.ExpectedConflict) -> JSONValue {
                .object([
                    ("goal", .string(c.goal.uuidString)), ("field", .string(c.field)), ("winner", .string(c.winner)),
                    ("overwritten", .array(c.overwritten.sorted(by: String.bytesPrecede).map { .string($0) })),
                ])
            }
            let foundShort = found.map {
                Scenario.ExpectedConflict(
                    goal: $0.goal, field: $0.field.rawValue, winner: $0.winner.device, overwritten: $0.overwritten.map(\.device))
            }
            expect("\(on) conflicts", .array(expected.map(describe)), .array(foundShort.map(describe)))
        }
        if let names = x.converged {
            let replays = try names.map { (n) throws(LedgerError) in try stores[n]!.reading { try $0.replay() } }
            let texts = try replays.map { (r) throws(LedgerError) in
                try JSONWriter.string(.object([("position", .number(Double(r.position))), ("goals", r.canonicalJSON)]))
            }
            checks += 1
            if Set(texts).count != 1 {
                let digests = try zip(names, replays).map { (n, r) throws(LedgerError) in
                    "\(n) \(try r.digest.prefix(12)) (\(r.position) events)"
                }
                .joined(separator: ", ")
                failures.append("\(x.label): converged \(names.joined(separator: ", ")): expected identical replays, found \(digests)")
            }
        }
        if let store = device {
            failures += try ScenarioHooks.checkReminders(x, store: store, now: now, lastReport: lastReports[store.device], checks: &checks)
        }
        return failures
    }
}

/// Reminder steps and checks.
enum ScenarioHooks {
    static func reconcile(_ store: LedgerStore, at: Instant, full: Bool) throws(LedgerError) -> ReconcileReport {
        try FileCenterReconciler(store: store).reconcile(now: at, full: full)
    }

    static func checkReminders(
        _ x: Scenario.Expectation, store: LedgerStore, now: Instant, lastReport: ReconcileReport?,
        checks: inout Int
    ) throws(LedgerError) -> [String] {
        var failures: [String] = []
        func expect(_ what: String, _ expected: [String], _ found: [String]) {
            checks += 1
            if expected.sorted(by: String.bytesPrecede) != found.sorted(by: String.bytesPrecede) {
                failures.append("\(x.label): device \(store.device) \(what): expected \(expected.sorted()), found \(found.sorted())")
            }
        }
        if let pending = x.pending {
            let (_, plan) = try Reconciler.pending(store: store, device: store.device, now: now)
            expect("pending at \(now)", pending, plan.requests.map(\.id))
        }
        if let center = x.center {
            let file = try NotificationCenterFile.load(FileCenterReconciler(store: store).centerPath, defaultCapacity: 64)
            expect("center", center, file.requests.map(\.id))
        }
        if let issues = x.issues {
            expect("issues of the last reconcile", issues, lastReport?.issues.map { "\($0.kind.rawValue) \($0.goal.uuidString)" } ?? [])
        }
        if let scheduled = x.scheduled { expect("scheduled by the last reconcile", scheduled, lastReport?.scheduled ?? []) }
        if let cancelled = x.cancelled { expect("cancelled by the last reconcile", cancelled, lastReport?.cancelled ?? []) }
        return failures
    }
}
