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
        do throws(FieldError) {
            var r = try ObjectReader(scenario: json, at: "", fields: ["name", "description", "schema", "start", "devices", "steps", "hub"])
            self = try Self.header(&r, name: fallback)
            guard case .array(let deviceList) = r.raw("devices"), !deviceList.isEmpty else {
                throw FieldError("devices", "must list at least one device")
            }
            for (i, d) in deviceList.enumerated() { devices.append(try device(d, at: "devices[\(i)]")) }
            guard case .array(let stepList) = r.raw("steps") else { throw FieldError("steps", "must be an array") }
            for (i, s) in stepList.enumerated() { steps.append(try step(s, at: "steps[\(i)]")) }
        } catch {
            throw LedgerError(.invalidInput, "\(fallback): \(error.field ?? "scenario"): \(error.message)")
        }
    }

    /// The scenario's own members: its name (the file's when it has none), whether it has a hub,
    /// the event schema of its stores and its start. Its devices and steps are still to be read.
    private static func header(_ r: inout ObjectReader, name fallback: String) throws(FieldError) -> Scenario {
        let hasHub = try r.scenarioBool("hub") ?? false
        var schema = LedgerStore.currentSchema
        if let s = r.raw("schema") {
            guard case .number(let n) = s, n == 1 || n == 2 else { throw FieldError("schema", "must be 1 or 2") }
            schema = Int(n)
        }
        var name = fallback
        if case .string(let s) = r.raw("name") { name = s }
        let start = try r.scenarioInstant("start") ?? Instant(rfc3339: "2026-01-01T00:00:00Z")!
        return Scenario(name: name, hasHub: hasHub, schema: schema, start: start, devices: [], steps: [])
    }

    /// A device: a name that no device before it (nor the hub) has, its settings when it names a
    /// time zone, and its notification permission.
    private func device(_ value: JSONValue, at place: String) throws(FieldError) -> Device {
        var r = try ObjectReader(
            scenario: value, at: place,
            fields: ["name", "timeZone", "firstWeekday", "locale", "strategy", "windowDays", "capacity", "authorization"])
        let name = try r.scenarioString("name")
        let namesTheHub = hasHub && name == Self.hubName
        guard DeviceName.isValid(name), !devices.contains(where: { $0.name == name }), !namesTheHub else {
            throw FieldError(r.name("name"), "must be a new device name\(namesTheHub ? " (\"hub\" names the hub)" : "")")
        }
        var device = Device(name: name)
        if r.has("timeZone") { device.configuration = try Self.configuration(value, at: place) }
        device.authorization = try r.scenarioEnumeration("authorization", AuthorizationStatus.self)
        return device
    }

    /// A device's settings: its members other than `name` and `authorization`, read as the
    /// `deviceConfigured` event that the device starts with.
    private static func configuration(_ value: JSONValue, at place: String) throws(FieldError) -> DeviceConfigured {
        var config: [(String, JSONValue)] = [("type", .string("deviceConfigured"))]
        if case .object(let m) = value { config += m.filter { !["name", "authorization"].contains($0.0) } }
        do throws(FieldError) {
            guard case .deviceConfigured(let c) = try EventDraft(json: .object(config)).payload else {
                throw FieldError(nil, "not a device")
            }
            // The device reports these settings itself: its zone must be one this system knows.
            guard TimeZone(identifier: c.timeZone) != nil else {
                throw FieldError("timeZone", "\"\(c.timeZone)\" is not a time zone this system knows")
            }
            return c
        } catch {
            throw FieldError(place + "." + (error.field ?? ""), error.message)
        }
    }

    /// A step: the member that names its kind (`append`, `sync`, `reconcile`, `migrate` or
    /// `expect`) says which members it may have.
    private func step(_ value: JSONValue, at place: String) throws(FieldError) -> Step {
        if value["append"] != nil {
            var r = try ObjectReader(scenario: value, at: place, fields: ["append", "at", "events", "expectError"])
            let device = try deviceName(&r, "append")
            let events = try Self.events(r.raw("events"), at: r.name("events"))
            var expectError: Int32?
            if case .number(let n) = r.raw("expectError") {
                // An exit code: a whole number a process can exit with.
                guard n.rounded() == n, (0...255).contains(n) else {
                    throw FieldError(r.name("expectError"), "must be an exit code from 0 to 255")
                }
                expectError = Int32(n)
            }
            return .append(device: device, at: try r.scenarioInstant("at", required: true)!, events: events, expectError: expectError)
        }
        if value["sync"] != nil {
            var r = try ObjectReader(scenario: value, at: place, fields: ["sync"])
            let pair = try r.scenarioStrings("sync", required: true)!
            guard pair.count == 2, pair[0] != pair[1] else { throw FieldError(r.name("sync"), "must name two different devices") }
            return .sync(try peer(pair[0], at: r.name("sync") + "[0]"), try peer(pair[1], at: r.name("sync") + "[1]"))
        }
        if value["reconcile"] != nil {
            var r = try ObjectReader(scenario: value, at: place, fields: ["reconcile", "at", "full"])
            var full = false
            if case .bool(let b) = r.raw("full") { full = b }
            return .reconcile(device: try deviceName(&r, "reconcile"), at: try r.scenarioInstant("at", required: true)!, full: full)
        }
        if value["migrate"] != nil {
            var r = try ObjectReader(scenario: value, at: place, fields: ["migrate"])
            return .migrate(try deviceName(&r, "migrate"))
        }
        if value["expect"] != nil {
            var r = try ObjectReader(scenario: value, at: place, fields: ["expect"])
            return .expect(try expectation(r.raw("expect")!, label: place))
        }
        throw FieldError(place, "a step is one of append, sync, reconcile, migrate, expect")
    }

    /// The events of an `append` step, each read in the schema-1 catalog or else in the schema-2
    /// one: the store checks them against its own schema.
    private static func events(_ value: JSONValue?, at place: String) throws(FieldError) -> [EventDraft] {
        guard case .array(let lines) = value else { throw FieldError(place, "must be an array of events") }
        var drafts: [EventDraft] = []
        for (j, line) in lines.enumerated() {
            do throws(FieldError) {
                if let legacy = try? EventDraft(json: line, schema: 1) {
                    drafts.append(legacy)
                } else {
                    drafts.append(try EventDraft(json: line, schema: 2))
                }
            } catch {
                throw FieldError("\(place)[\(j)]" + (error.field.map { ".\($0)" } ?? ""), error.message)
            }
        }
        return drafts
    }

    /// The goal facts an expectation may state, compared with the goal's JSON by key.
    private static let factKeys = ["title", "details", "cadence", "targetDate", "progress", "reminder", "tags", "deleted"]

    /// What an `expect` step (at `label`) states about a device, and one of its goals.
    private func expectation(_ value: JSONValue, label: String) throws(FieldError) -> Expectation {
        var r = try ObjectReader(
            scenario: value, at: label + ".expect",
            fields: Self.factKeys + [
                "device", "goal", "now", "exists", "entries", "entryCount", "periodValue", "completed", "conflicts", "converged", "pending",
                "center", "issues", "scheduled", "cancelled",
            ])
        var x = Expectation(label: label)
        if r.has("device") { x.device = try deviceName(&r, "device") }
        x.goal = try r.scenarioUUID("goal")
        x.now = try r.scenarioInstant("now")
        for key in Self.factKeys {
            if let v = r.raw(key) { x.facts.append((key, v)) }
        }
        if case .bool(let b) = r.raw("exists") { x.exists = b }
        if let entries = try r.scenarioStrings("entries") {
            x.entries = []
            for s in entries {
                guard let id = UUID.parse(s) else { throw FieldError(r.name("entries"), "must be a UUID") }
                x.entries!.append(id)
            }
        }
        if case .number(let n) = r.raw("entryCount") {
            guard n.rounded() == n, (0...1e15).contains(n) else {
                throw FieldError(r.name("entryCount"), "must be a whole number of entries")
            }
            x.entryCount = Int(n)
        }
        x.periodValue = r.raw("periodValue")
        if case .bool(let b) = r.raw("completed") { x.completed = b }
        if case .array(let conflicts) = r.raw("conflicts") {
            x.conflicts = []
            for (j, c) in conflicts.enumerated() { x.conflicts!.append(try Self.conflict(c, at: r.name("conflicts") + "[\(j)]")) }
        }
        x.converged = try r.scenarioStrings("converged")
        // Replays are compared between the scenario's devices (the hub keeps no replay).
        for (j, name) in (x.converged ?? []).enumerated() where !devices.contains(where: { $0.name == name }) {
            throw FieldError(r.name("converged") + "[\(j)]", "unknown device \"\(name)\"")
        }
        x.pending = try r.scenarioStrings("pending")
        x.center = try r.scenarioStrings("center")
        x.issues = try r.scenarioStrings("issues")
        x.scheduled = try r.scenarioStrings("scheduled")
        x.cancelled = try r.scenarioStrings("cancelled")
        if (x.goal != nil || !x.facts.isEmpty || x.entries != nil || x.pending != nil || x.center != nil || x.conflicts != nil
            || x.issues != nil || x.scheduled != nil || x.cancelled != nil) && x.device == nil
        {
            throw FieldError(r.path, "needs a device")
        }
        if (!x.facts.isEmpty || x.entries != nil || x.entryCount != nil || x.periodValue != nil || x.completed != nil
            || x.exists != nil) && x.goal == nil
        {
            throw FieldError(r.path, "needs a goal")
        }
        return x
    }

    /// A conflict an expectation expects a device's ledger to report.
    private static func conflict(_ value: JSONValue, at place: String) throws(FieldError) -> ExpectedConflict {
        var r = try ObjectReader(scenario: value, at: place, fields: ["goal", "field", "winner", "overwritten"])
        return ExpectedConflict(
            goal: try r.scenarioUUID("goal", required: true)!, field: try r.scenarioString("field"),
            winner: try r.scenarioString("winner"), overwritten: try r.scenarioStrings("overwritten") ?? [])
    }

    /// The device a member names, which must be one of the scenario's.
    private func deviceName(_ r: inout ObjectReader, _ key: String) throws(FieldError) -> String {
        let name = try r.scenarioString(key)
        guard devices.contains(where: { $0.name == name }) else { throw FieldError(r.name(key), "unknown device \"\(name)\"") }
        return name
    }

    /// One side of a `sync` step: a device, or the hub when the scenario has one.
    private func peer(_ name: String, at place: String) throws(FieldError) -> String {
        guard (hasHub && name == Self.hubName) || devices.contains(where: { $0.name == name }) else {
            throw FieldError(place, "unknown device \"\(name)\"")
        }
        return name
    }
}

/// The scenario format reads its members with `ObjectReader`, in its own words: a message says
/// what a member must be, without the `, got …` that the other formats add; a member the format
/// needs is refused, when absent, as one of the wrong type; and an unknown member is named
/// before any wrong value.
extension ObjectReader {
    /// Opens the object at `place` ("" for the scenario itself) and refuses any member but
    /// `fields` at once, as `unknown field "key"` of the object.
    fileprivate init(scenario value: JSONValue, at place: String, fields: [String]) throws(FieldError) {
        self = try inScenarioWords { () throws(FieldError) in try ObjectReader(value, path: place) }
        for field in fields { _ = raw(field) }
        do throws(FieldError) {
            try finish()
        } catch {
            // `finish` names the member (`place.key`); a scenario names the object and the key.
            let key = String(decoding: (error.field ?? "").utf8.dropFirst(place.isEmpty ? 0 : place.utf8.count + 1), as: UTF8.self)
            throw FieldError(place.isEmpty ? nil : place, "unknown field \"\(key)\"")
        }
    }

    /// A string the format needs.
    fileprivate mutating func scenarioString(_ key: String) throws(FieldError) -> String {
        try inScenarioWords { () throws(FieldError) in
            guard let s = try string(key) else { throw FieldError(name(key), "must be a string") }
            return s
        }
    }

    /// An instant within `Instant.supportedNow`.
    fileprivate mutating func scenarioInstant(_ key: String, required: Bool = false) throws(FieldError) -> Instant? {
        try inScenarioWords { () throws(FieldError) in
            guard let i = try instant(key) else {
                if required { throw FieldError(name(key), "must be a string") }
                return nil
            }
            guard Instant.supportedNow.contains(i) else {
                throw FieldError(name(key), "must be between 1970-01-02T00:00:00Z and 9999-12-30T23:59:59.999Z")
            }
            return i
        }
    }

    /// A UUID (a goal's id).
    fileprivate mutating func scenarioUUID(_ key: String, required: Bool = false) throws(FieldError) -> UUID? {
        try inScenarioWords { () throws(FieldError) in
            guard let id = try uuid(key) else {
                if required { throw FieldError(name(key), "must be a string") }
                return nil
            }
            return id
        }
    }

    /// An array of strings (device names, notification ids, issues).
    fileprivate mutating func scenarioStrings(_ key: String, required: Bool = false) throws(FieldError) -> [String]? {
        try inScenarioWords { () throws(FieldError) in
            guard let list = try strings(key, of: "strings") else {
                if required { throw FieldError(name(key), "must be an array of strings") }
                return nil
            }
            return list
        }
    }

    /// `true` or `false`.
    fileprivate mutating func scenarioBool(_ key: String) throws(FieldError) -> Bool? {
        try inScenarioWords { () throws(FieldError) in try bool(key) }
    }

    /// One of the raw values of `E`.
    fileprivate mutating func scenarioEnumeration<E: RawRepresentable & CaseIterable>(_ key: String, _ type: E.Type) throws(FieldError)
        -> E?
    where E.RawValue == String {
        try inScenarioWords { () throws(FieldError) in try enumeration(key, type) }
    }
}

/// What `body` returns; what it throws, in the scenario format's words (`inScenarioWords`).
private func inScenarioWords<T>(_ body: () throws(FieldError) -> T) throws(FieldError) -> T {
    do throws(FieldError) {
        return try body()
    } catch {
        throw error.inScenarioWords
    }
}

extension FieldError {
    /// The error without the value found (`must be a UUID, got "x"` becomes `must be a UUID`).
    fileprivate var inScenarioWords: FieldError {
        guard let cut = message.range(of: ", got ") else { return self }
        return FieldError(field, String(message[..<cut.lowerBound]))
    }
}
