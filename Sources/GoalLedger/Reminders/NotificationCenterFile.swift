import Foundation

/// A request as a device's notification center holds it: what was scheduled, without the
/// planner's `nextFireAt`.
public struct PendingRequest: Equatable, Sendable {
    public var id: String
    /// The goal in the request's payload (`userInfo.goalId`); nil for requests that are not
    /// goal reminders.
    public var goal: UUID?
    public var title: String
    public var body: String
    public var sound: String
    public var trigger: NotificationTrigger

    public init(_ r: NotificationRequest) {
        id = r.id
        goal = r.goal
        title = r.title
        body = r.body
        sound = r.sound
        trigger = r.trigger
    }

    public init(id: String, goal: UUID?, title: String, body: String, sound: String, trigger: NotificationTrigger) {
        self.id = id
        self.goal = goal
        self.title = title
        self.body = body
        self.sound = sound
        self.trigger = trigger
    }

    public var json: JSONValue {
        .object([
            ("id", .string(id)), ("goal", goal.map { .string($0.uuidString) } ?? .null), ("title", .string(title)),
            ("body", .string(body)), ("sound", .string(sound)), ("trigger", trigger.json),
        ])
    }
}

/// A file-backed stand-in for a device's notification center (on a phone, the OS holds these):
/// `{"capacity","requests":[…],"refuse":[ids]}`. `refuse` lists ids the center will not
/// schedule, to test failures. The file is replaced atomically on every save.
public struct NotificationCenterFile: Sendable {
    public var path: String
    public var capacity: Int
    public var requests: [PendingRequest]
    public var refuse: Set<String>

    /// Reads the center at `path`; a missing file is an empty center of `defaultCapacity`.
    public static func load(_ path: String, defaultCapacity: Int) throws(LedgerError) -> NotificationCenterFile {
        guard FileManager.default.fileExists(atPath: path) else {
            return NotificationCenterFile(path: path, capacity: defaultCapacity, requests: [], refuse: [])
        }
        guard let data = FileManager.default.contents(atPath: path) else { throw LedgerError(.invalidInput, "cannot read \(path)") }
        func bad(_ field: String, _ why: String) -> LedgerError { LedgerError(.invalidInput, "\(path): field \"\(field)\": \(why)") }
        let json: JSONValue
        do {
            json = try JSONParser.parse(Array(data))
        } catch {
            throw LedgerError(.invalidInput, "\(path): malformed JSON: \(error)")
        }
        guard case .object(let members) = json else { throw bad("(root)", "must be an object") }
        for (k, _) in members where !["capacity", "requests", "refuse"].contains(k) { throw bad(k, "unknown field") }
        var capacity = defaultCapacity
        if let c = json["capacity"] {
            guard case .number(let n) = c, n == n.rounded(), n >= 0, n <= 100_000 else {
                throw bad("capacity", "must be a whole number from 0 to 100000")
            }
            capacity = Int(n)
        }
        var requests: [PendingRequest] = []
        if let list = json["requests"] {
            guard case .array(let items) = list else { throw bad("requests", "must be an array") }
            var ids = Set<String>()
            for (i, item) in items.enumerated() {
                let at = "requests[\(i)]"
                guard case .object(let m) = item else { throw bad(at, "must be an object") }
                for (k, _) in m where !["id", "goal", "title", "body", "sound", "trigger"].contains(k) {
                    throw bad("\(at).\(k)", "unknown field")
                }
                func string(_ key: String) throws(LedgerError) -> String {
                    guard case .string(let s) = item[key] else { throw bad("\(at).\(key)", "must be a string") }
                    return s
                }
                let id = try string("id")
                guard ids.insert(id).inserted else { throw bad("\(at).id", "\"\(id)\" appears twice") }
                var goal: UUID?
                if let g = item["goal"], g != .null {
                    guard case .string(let s) = g, let u = UUID(uuidString: s) else { throw bad("\(at).goal", "must be a UUID or null") }
                    goal = u
                }
                let trigger: NotificationTrigger
                do throws(FieldError) {
                    trigger = try NotificationTrigger(json: item["trigger"] ?? .null)
                } catch {
                    throw bad("\(at).trigger" + (error.field.map { "." + $0 } ?? ""), error.message)
                }
                requests.append(
                    PendingRequest(
                        id: id, goal: goal, title: try string("title"), body: try string("body"),
                        sound: try string("sound"), trigger: trigger))
            }
        }
        var refuse = Set<String>()
        if let r = json["refuse"] {
            guard case .array(let items) = r else { throw bad("refuse", "must be an array of ids") }
            for item in items {
                guard case .string(let s) = item else { throw bad("refuse", "must be an array of ids") }
                refuse.insert(s)
            }
        }
        return NotificationCenterFile(path: path, capacity: capacity, requests: requests, refuse: refuse)
    }

    public var json: JSONValue {
        .object([
            ("capacity", .number(Double(capacity))),
            ("requests", .array(requests.sorted { String.bytesPrecede($0.id, $1.id) }.map(\.json))),
            ("refuse", .array(refuse.sorted(by: String.bytesPrecede).map { .string($0) })),
        ])
    }

    public func save() throws(LedgerError) {
        do {
            try Data((JSONWriter.string(json) + "\n").utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
        } catch {
            throw LedgerError(.store, "cannot write the notification center \(path): \(error.localizedDescription)")
        }
    }

    /// Adds or replaces a request; false when the center refuses it (a refused id, or full).
    mutating func schedule(_ r: PendingRequest) -> Bool {
        if refuse.contains(r.id) { return false }
        if let i = requests.firstIndex(where: { $0.id == r.id }) {
            requests[i] = r
            return true
        }
        guard requests.count < capacity else { return false }
        requests.append(r)
        return true
    }

    mutating func cancel(_ id: String) { requests.removeAll { $0.id == id } }
}
