import Foundation
import GoalLedger

/// A conflict scenario: devices of one ledger, steps that append, sync and reconcile, and
/// expectations about what each device then holds. The JSON form is described in
/// `Schemas/scenario.schema.json`.
public struct Scenario: Sendable {
    public struct Device: Sendable {
        public var name: String
        public var configuration: DeviceConfigured?
        public var authorization: AuthorizationStatus?
    }

    public enum Step: Sendable {
        /// Events appended on a device as one batch, at a wall time; `expectError` names the exit
        /// code the append must fail with (nothing is then written).
        case append(device: String, at: Instant, events: [EventDraft], expectError: Int32?)
        case sync(String, String)
        case reconcile(device: String, at: Instant, full: Bool)
        /// `ledger migrate` on a device's store.
        case migrate(String)
        case expect(Expectation)
    }

    public struct Expectation: Sendable {
        /// The step's position in the file, for messages.
        public var label: String
        public var device: String?
        public var goal: UUID?
        public var now: Instant?
        /// Goal facts, by key of the goal's JSON (`title`, `details`, `cadence`, `targetDate`,
        /// `progress`, `reminder`, `tags`, `deleted`).
        public var facts: [(String, JSONValue)] = []
        public var entries: [UUID]?
        public var entryCount: Int?
        public var periodValue: JSONValue?
        public var completed: Bool?
        public var exists: Bool?
        public var conflicts: [ExpectedConflict]?
        public var converged: [String]?
        public var pending: [String]?
        public var center: [String]?
        public var issues: [String]?
        public var scheduled: [String]?
        public var cancelled: [String]?
    }

    public struct ExpectedConflict: Equatable, Sendable {
        public var goal: UUID
        public var field: String
        public var winner: String
        public var overwritten: [String]
    }

    public var name: String
    /// Whether the scenario has a hub, which `sync` steps may name as `"hub"`.
    public var hasHub = false
    /// The event schema the stores are created with (1 behaves like the old app).
    public var schema: Int
    public var start: Instant
    public var devices: [Device]
    public var steps: [Step]
}

extension Scenario {
    /// The name `sync` steps give the hub.
    public static let hubName = "hub"

    /// Reads a scenario; every problem names its place in the file.
    public init(json: JSONValue, name fallback: String) throws(LedgerError) {
        func bad(_ at: String, _ why: String) -> LedgerError { LedgerError(.invalidInput, "\(fallback): \(at): \(why)") }
        func string(_ v: JSONValue?, _ at: String) throws(LedgerError) -> String {
            guard case .string(let s) = v else { throw bad(at, "must be a string") }
            return s
        }
        func instant(_ v: JSONValue?, _ at: String) throws(LedgerError) -> Instant {
            guard let i = Instant(rfc3339: try string(v, at)) else { throw bad(at, "must be an RFC 3339 instant") }
            guard Instant.supportedNow.contains(i) else { throw bad(at, "must be between 1970-01-02T00:00:00Z and 9999-12-30T23:59:59.999Z") }
            return i
        }
        func uuid(_ v: JSONValue?, _ at: String) throws(LedgerError) -> UUID {
            guard let u = UUID.parse(try string(v, at)) else { throw bad(at, "must be a UUID") }
            return u
        }
        func strings(_ v: JSONValue?, _ at: String) throws(LedgerError) -> [String] {
            guard case .array(let items) = v else { throw bad(at, "must be an array of strings") }
            var out: [String] = []
            for (i, item) in items.enumerated() { out.append(try string(item, "\(at)[\(i)]")) }
            return out
        }
        func keys(_ v: JSONValue, _ allowed: Set<String>, _ at: String) throws(LedgerError) {
            guard case .object(let m) = v else { throw bad(at, "must be an object") }
            for (k, _) in m where !allowed.contains(k) { throw bad(at, "unknown field \"\(k)\"") }
        }

        try keys(json, ["name", "description", "schema", "start", "devices", "steps", "hub"], "scenario")
        if let h = json["hub"] {
            guard case .bool(let b) = h else { throw bad("hub", "must be true or false") }
            hasHub = b
        }
        schema = LedgerStore.currentSchema
        if let s = json["schema"] {
            guard case .number(let n) = s, n == 1 || n == 2 else { throw bad("schema", "must be 1 or 2") }
            schema = Int(n)
        }
        name = json["name"].map { v in if case .string(let s) = v { return s } else { return fallback } } ?? fallback
        start = try json["start"].map { (v) throws(LedgerError) in try instant(v, "start") } ?? Instant(rfc3339: "2026-01-01T00:00:00Z")!
        guard case .array(let deviceList) = json["devices"], !deviceList.isEmpty else {
            throw bad("devices", "must list at least one device")
        }
        devices = []
        for (i, d) in deviceList.enumerated() {
            let at = "devices[\(i)]"
            try keys(d, ["name", "timeZone", "firstWeekday", "locale", "strategy", "windowDays", "capacity", "authorization"], at)
            let name = try string(d["name"], at + ".name")
            guard DeviceName.isValid(name), !devices.contains(where: { $0.name == name }), !(hasHub && name == Self.hubName) else {
                throw bad(at + ".name", "must be a new device name\(hasHub && name == Self.hubName ? " (\"hub\" names the hub)" : "")")
            }
            var device = Device(name: name)
            if d["timeZone"] != nil {
                var config: [(String, JSONValue)] = [("type", .string("deviceConfigured"))]
                if case .object(let m) = d { config += m.filter { !["name", "authorization"].contains($0.0) } }
                do throws(FieldError) {
                    guard case .deviceConfigured(let c) = try EventDraft(json: .object(config)).payload else {
                        throw FieldError(nil, "not a device")
                    }
                    device.configuration = c
                } catch {
                    throw bad(at + "." + (error.field ?? ""), error.message)
                }
            }
            if let a = d["authorization"] {
                guard let status = AuthorizationStatus(rawValue: try string(a, at + ".authorization")) else {
                    throw bad(
                        at + ".authorization", "must be one of \(AuthorizationStatus.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                device.authorization = status
            }
            devices.append(device)
        }
        let names = Set(devices.map(\.name))
        func device(_ v: JSONValue?, _ at: String) throws(LedgerError) -> String {
            let n = try string(v, at)
            guard names.contains(n) else { throw bad(at, "unknown device \"\(n)\"") }
            return n
        }
        guard case .array(let stepList) = json["steps"] else { throw bad("steps", "must be an array") }
        steps = []
        for (i, s) in stepList.enumerated() {
            let at = "steps[\(i)]"
            if s["append"] != nil {
                try keys(s, ["append", "at", "events", "expectError"], at)
                let d = try device(s["append"], at + ".append")
                guard case .array(let lines) = s["events"] else { throw bad(at + ".events", "must be an array of events") }
                var drafts: [EventDraft] = []
                for (j, line) in lines.enumerated() {
                    do throws(FieldError) {
                        // Checked against both catalogs here; the store checks its own schema.
                        if let legacy = try? EventDraft(json: line, schema: 1) {
                            drafts.append(legacy)
                        } else {
                            drafts.append(try EventDraft(json: line, schema: 2))
                        }
                    } catch {
                        throw bad("\(at).events[\(j)]" + (error.field.map { ".\($0)" } ?? ""), error.message)
                    }
                }
                var expectError: Int32?
                if case .number(let n) = s["expectError"] { expectError = Int32(n) }
                steps.append(.append(device: d, at: try instant(s["at"], at + ".at"), events: drafts, expectError: expectError))
            } else if s["sync"] != nil {
                try keys(s, ["sync"], at)
                let pair = try strings(s["sync"], at + ".sync")
                guard pair.count == 2, pair[0] != pair[1] else { throw bad(at + ".sync", "must name two different devices") }
                func peer(_ i: Int) throws(LedgerError) -> String {
                    if hasHub, pair[i] == Self.hubName { return pair[i] }
                    return try device(.string(pair[i]), at + ".sync[\(i)]")
                }
                steps.append(.sync(try peer(0), try peer(1)))
            } else if s["reconcile"] != nil {
                try keys(s, ["reconcile", "at", "full"], at)
                var full = false
                if case .bool(let b) = s["full"] { full = b }
                steps.append(
                    .reconcile(device: try device(s["reconcile"], at + ".reconcile"), at: try instant(s["at"], at + ".at"), full: full))
            } else if s["migrate"] != nil {
                try keys(s, ["migrate"], at)
                steps.append(.migrate(try device(s["migrate"], at + ".migrate")))
            } else if let e = s["expect"] {
                try keys(s, ["expect"], at)
                try keys(
                    e,
                    [
                        "device", "goal", "now", "title", "details", "cadence", "targetDate", "progress", "reminder", "tags", "deleted",
                        "exists", "entries", "entryCount", "periodValue", "completed", "conflicts", "converged", "pending", "center",
                        "issues",
                        "scheduled", "cancelled",
                    ], at + ".expect")
                var x = Expectation(label: at)
                if let d = e["device"] { x.device = try device(d, at + ".expect.device") }
                if let g = e["goal"] { x.goal = try uuid(g, at + ".expect.goal") }
                if let n = e["now"] { x.now = try instant(n, at + ".expect.now") }
                for key in ["title", "details", "cadence", "targetDate", "progress", "reminder", "tags", "deleted"] {
                    if let v = e[key] { x.facts.append((key, v)) }
                }
                if case .bool(let b) = e["exists"] { x.exists = b }
                if let v = e["entries"] {
                    x.entries = try strings(v, at + ".expect.entries").map { s throws(LedgerError) in
                        try uuid(.string(s), at + ".expect.entries")
                    }
                }
                if case .number(let n) = e["entryCount"] { x.entryCount = Int(n) }
                x.periodValue = e["periodValue"]
                if case .bool(let b) = e["completed"] { x.completed = b }
                if case .array(let cs) = e["conflicts"] {
                    x.conflicts = []
                    for (j, c) in cs.enumerated() {
                        let cat = "\(at).expect.conflicts[\(j)]"
                        try keys(c, ["goal", "field", "winner", "overwritten"], cat)
                        x.conflicts!.append(
                            ExpectedConflict(
                                goal: try uuid(c["goal"], cat + ".goal"), field: try string(c["field"], cat + ".field"),
                                winner: try string(c["winner"], cat + ".winner"),
                                overwritten: try strings(c["overwritten"] ?? .array([]), cat + ".overwritten")))
                    }
                }
                if let v = e["converged"] { x.converged = try strings(v, at + ".expect.converged") }
                if let v = e["pending"] { x.pending = try strings(v, at + ".expect.pending") }
                if let v = e["center"] { x.center = try strings(v, at + ".expect.center") }
                if let v = e["issues"] { x.issues = try strings(v, at + ".expect.issues") }
                if let v = e["scheduled"] { x.scheduled = try strings(v, at + ".expect.scheduled") }
                if let v = e["cancelled"] { x.cancelled = try strings(v, at + ".expect.cancelled") }
                if (x.goal != nil || !x.facts.isEmpty || x.entries != nil || x.pending != nil || x.center != nil || x.conflicts != nil
                    || x.issues != nil || x.scheduled != nil || x.cancelled != nil) && x.device == nil
                {
                    throw bad(at + ".expect", "needs a device")
                }
                if (!x.facts.isEmpty || x.entries != nil || x.entryCount != nil || x.periodValue != nil || x.completed != nil
                    || x.exists != nil) && x.goal == nil
                {
                    throw bad(at + ".expect", "needs a goal")
                }
                steps.append(.expect(x))
            } else {
                throw bad(at, "a step is one of append, sync, reconcile, migrate, expect")
            }
        }
    }
}
