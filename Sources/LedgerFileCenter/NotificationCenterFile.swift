import Foundation
import GoalLedger
import Synchronization

/// The file form of a stand-in for a device's notification center (on a phone, the OS holds
/// these): `{"capacity","requests":[…],"refuse":[ids],"delivered":[…]}`. `refuse` lists ids the
/// center will not schedule, to test failures; `delivered` (written only when not empty) holds
/// notifications that have fired. The file is replaced atomically on every save.
package struct NotificationCenterFile: Sendable {
    /// The file's path.
    package var path: String
    /// How many requests the center holds at most (when the file does not say, the
    /// `defaultCapacity` it was loaded with).
    package var capacity: Int
    /// The pending requests, in the order they were added.
    package var requests: [NotificationRequest]
    /// Ids the center refuses to schedule.
    package var refuse: Set<String>
    /// The notifications that have fired, in the order they fired.
    package var delivered: [DeliveredNotification] = []

    /// Reads the center at `path`; a missing file is an empty center of `defaultCapacity`.
    /// Every problem names its field (`requests[2].trigger.hour`), with the same reader as
    /// events; unknown fields are refused.
    package static func load(_ path: String, defaultCapacity: Int) throws(LedgerError) -> NotificationCenterFile {
        guard FileManager.default.fileExists(atPath: path) else {
            return NotificationCenterFile(path: path, capacity: defaultCapacity, requests: [], refuse: [])
        }
        guard let data = FileManager.default.contents(atPath: path) else { throw LedgerError(.invalidInput, "cannot read \(path)") }
        return try decode(Array(data), path: path, defaultCapacity: defaultCapacity)
    }

    /// Reads the bytes of the center at `path` (named in every error), as `load` does.
    package static func decode(_ bytes: [UInt8], path: String, defaultCapacity: Int) throws(LedgerError) -> NotificationCenterFile {
        let json: JSONValue
        do {
            json = try JSONParser.parse(bytes)
        } catch {
            throw LedgerError(.invalidInput, "\(path): malformed JSON: \(error)")
        }
        do throws(FieldError) {
            return try read(json, path: path, defaultCapacity: defaultCapacity)
        } catch {
            throw LedgerError(.invalidInput, "\(path): " + (error.field.map { "field \"\($0)\": " } ?? "") + error.message)
        }
    }

    private static func read(_ json: JSONValue, path: String, defaultCapacity: Int) throws(FieldError) -> NotificationCenterFile {
        var file = try ObjectReader(json, path: "")
        /// The objects of the array at `key`, each with its reader.
        func objects(_ key: String) throws(FieldError) -> [ObjectReader] {
            guard let list = file.raw(key) else { return [] }
            guard case .array(let items) = list else { throw FieldError(key, "must be an array, got \(list.typeName)") }
            var out: [ObjectReader] = []
            for (i, item) in items.enumerated() { out.append(try ObjectReader(item, path: "\(key)[\(i)]")) }
            return out
        }
        /// A goal id or null.
        func goal(_ r: inout ObjectReader) throws(FieldError) -> UUID? {
            guard let s = try r.nullableString("goal"), let s else { return nil }
            guard let id = UUID.parse(s) else { throw FieldError(r.name("goal"), "must be a UUID or null, got \"\(s)\"") }
            return id
        }
        let capacity = try file.integer("capacity", in: 0...100_000) ?? defaultCapacity
        var requests: [NotificationRequest] = []
        var ids = Set<String>()
        for var r in try objects("requests") {
            let id = try r.string("id", required: true)!
            guard ids.insert(id).inserted else { throw FieldError(r.name("id"), "\"\(id)\" appears twice") }
            let goal = try goal(&r)
            let title = try r.string("title", required: true)!
            let body = try r.string("body", required: true)!
            let sound = try r.string("sound", required: true)!
            let trigger = try NotificationTrigger(json: r.raw("trigger") ?? .null, path: r.name("trigger"))
            try r.finish()
            requests.append(NotificationRequest(id: id, goal: goal, title: title, body: body, sound: sound, trigger: trigger))
        }
        let refuse = Set(try file.strings("refuse", of: "ids") ?? [])
        var delivered: [DeliveredNotification] = []
        for var d in try objects("delivered") {
            let id = try d.string("id", required: true)!
            let goal = try goal(&d)
            let title = try d.string("title", required: true)!
            let body = try d.string("body", required: true)!
            guard let at = try d.instant("deliveredAt") else { throw FieldError(d.name("deliveredAt"), "is required") }
            try d.finish()
            delivered.append(DeliveredNotification(id: id, goal: goal, title: title, body: body, deliveredAt: at))
        }
        try file.finish()
        return NotificationCenterFile(path: path, capacity: capacity, requests: requests, refuse: refuse, delivered: delivered)
    }

    /// The file's JSON form, requests, ids and delivered notifications sorted by id.
    package var json: JSONValue {
        var members: [(String, JSONValue)] = [
            ("capacity", .number(Double(capacity))),
            ("requests", .array(requests.sorted { String.bytesPrecede($0.id, $1.id) }.map(\.json))),
            ("refuse", .array(refuse.sorted(by: String.bytesPrecede).map { .string($0) })),
        ]
        if !delivered.isEmpty { members.append(("delivered", .array(delivered.sorted { String.bytesPrecede($0.id, $1.id) }.map(\.json)))) }
        return .object(members)
    }

    /// Writes the file at `path`, replacing it atomically, readable by its owner only; throws a
    /// ``LedgerError/Code/store`` error when it cannot.
    package func save() throws(LedgerError) {
        let text = try JSONWriter.string(json) + "\n"
        do {
            try AtomicFile.write(Array(text.utf8), to: path)
        } catch {
            throw LedgerError(.store, "cannot write the notification center \(path): \(error.reason)")
        }
    }

    /// Adds or replaces a request; false when the center refuses it (a refused id, or full).
    package mutating func schedule(_ r: NotificationRequest) -> Bool {
        if refuse.contains(r.id) { return false }
        if let i = requests.firstIndex(where: { $0.id == r.id }) {
            requests[i] = r
            return true
        }
        guard requests.count < capacity else { return false }
        requests.append(r)
        return true
    }

    package mutating func cancel(_ ids: Set<String>) { requests.removeAll { ids.contains($0.id) } }

    /// What a device does as time passes: one-time requests whose time has come fire, leaving
    /// the pending list for the delivered ones. A calendar trigger without a zone is read in
    /// `timeZone` (the device's).
    package mutating func fire(until now: Instant, timeZone: TimeZone) {
        var kept: [NotificationRequest] = []
        for r in requests {
            guard let at = r.oneTimeFireAt(timeZone: timeZone), at <= now else {
                kept.append(r)
                continue
            }
            delivered.removeAll { $0.id == r.id }
            delivered.append(DeliveredNotification(id: r.id, goal: r.goal, title: r.title, body: r.body, deliveredAt: at))
        }
        requests = kept
    }
}

extension NotificationRequest {
    /// When a one-time request fires (nil for repeating ones and incomplete dates).
    package func oneTimeFireAt(timeZone: TimeZone) -> Instant? {
        guard !trigger.repeats else { return nil }
        switch trigger.kind {
        case .date(let at): return at
        case .calendar(let y?, let m?, let d?, _, let hour, let minute):
            guard let day = Day(year: y, month: m, day: d) else { return nil }
            return localInstant(day: day, hour: hour, minute: minute, timeZone: timeZone)
        default: return nil
        }
    }
}

/// The command line's notification center: a `NotificationCenterFile` read once, changed in
/// memory by a pass, and written back by `save()` (so a dry run simply does not save). Opening
/// it lets the time pass: one-time requests due by `now` move to `delivered`, as on a device.
package final class FileReminderCenter: ReminderCenter {
    private let file: Mutex<NotificationCenterFile>

    /// Reads the file at `path` (missing: an empty center of `defaultCapacity`) and fires the
    /// one-time requests due by `now`, reading calendar triggers in `timeZone`. Throws an
    /// ``LedgerError/Code/invalidInput`` error when the file is unreadable or invalid.
    package init(path: String, defaultCapacity: Int, now: Instant, timeZone: TimeZone) throws(LedgerError) {
        var f = try NotificationCenterFile.load(path, defaultCapacity: defaultCapacity)
        f.fire(until: now, timeZone: timeZone)
        file = Mutex(f)
    }

    /// The center as it is now, with the changes of the passes so far.
    package var contents: NotificationCenterFile { file.withLock { $0 } }

    /// Writes the center back to its file (``NotificationCenterFile/save()``).
    package func save() throws(LedgerError) { try contents.save() }

    package func pendingRequests() async throws -> [NotificationRequest] { contents.requests }

    package func add(_ request: NotificationRequest) async throws {
        let ok = file.withLock { $0.schedule(request) }
        if !ok { throw NotificationRefused(id: request.id, reason: "refused by the center file") }
    }

    package func removePendingRequests(withIdentifiers ids: [String]) async throws {
        file.withLock { $0.cancel(Set(ids)) }
    }

    package var supportsDeliveredNotifications: Bool { true }

    package func deliveredNotifications() async throws -> [DeliveredNotification] { contents.delivered }

    package func removeDeliveredNotifications(withIdentifiers ids: [String]) async throws {
        let gone = Set(ids)
        file.withLock { $0.delivered.removeAll { gone.contains($0.id) } }
    }
}
