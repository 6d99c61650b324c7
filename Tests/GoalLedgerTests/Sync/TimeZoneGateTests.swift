import Foundation
import LedgerTestSupport
import Sodium
import Testing

@testable import GoalLedger

/// The gate checks a time zone's spelling, never this system's time zone database: a store folds
/// every event the same way whatever the platform knows. A zone this system does not know is
/// handled where reminders are planned (as UTC), and the device naming its own zone must know it.
struct TimeZoneGateTests {
    let now = instant("2026-11-05T12:00:00Z")

    @Test(arguments: ["UTC", "Europe/Berlin", "America/Argentina/Buenos_Aires", "Etc/GMT+5", "Mars/Olympus", "EST5EDT", "GMT-0"])
    func aWellSpelledZonePassesTheGateWhetherOrNotThisSystemKnowsIt(_ zone: String) throws {
        #expect(FieldRules.isTimeZoneName(zone))
        #expect(throws: Never.self) { try EventDraft(payload: .deviceConfigured(DeviceConfigured(timeZone: zone))).checkWellFormed() }
    }

    @Test(arguments: ["", "/", "Europe/", "/Berlin", "Europe//Berlin", "../etc/passwd", ".hidden", "-x", "Europe/Berlin Time", "Europe/Bérlin",
        "A/B/C/D/E", "Europe/AVeryLongCityName", String(repeating: "a", count: 65), "Asia/Tokyo\n"])
    func aBadlySpelledZoneFailsTheGateWithItsName(_ zone: String) throws {
        #expect(!FieldRules.isTimeZoneName(zone))
        #expect {
            try EventDraft(payload: .deviceConfigured(DeviceConfigured(timeZone: zone))).checkWellFormed()
        } throws: { error in
            let e = error as? FieldError
            return e?.field == "timeZone" && e?.message.contains("must be an IANA time zone") == true
        }
    }

    @Test func theDeviceNamingItsOwnZoneMustKnowItAndNothingIsWrittenOtherwise() throws {
        let dir = TemporaryDirectory()
        let phone = try LedgerStore.create(at: dir.path + "/phone", device: "phone")
        let before = try phone.lastPosition()
        #expect {
            try phone.append([EventDraft(payload: .deviceConfigured(DeviceConfigured(timeZone: "Mars/Olympus")))], now: now)
        } throws: { error in
            let e = error as? LedgerError
            return e?.code == .invalidInput && e?.message.contains("\"Mars/Olympus\" is not a time zone this system knows") == true
        }
        #expect(try phone.lastPosition() == before)
        try phone.append([EventDraft(payload: .deviceConfigured(DeviceConfigured(timeZone: "Asia/Tokyo")))], now: now)
        #expect(try phone.deviceState("phone").settings.timeZone == "Asia/Tokyo")
    }

    @Test func aZoneOnlyAnotherSystemKnowsIsFoldedEverywhereAndPlannedInUTCHere() throws {
        let dir = TemporaryDirectory()
        let watchKey = SigningKey.generate()
        let (phone, laptop) = try ClockBoundTests.ledger(dir, thief: watchKey, at: now)
        try phone.append(
            [EventDraft(payload: .reminderSet(ReminderSet(goal: TrustAttackTests.goal, hour: 9, minute: 30, devices: ["watch"])))], now: now)
        // The watch runs on a system whose database knows a zone this one does not.
        let settings = DeviceConfigured(timeZone: "Mars/Olympus", strategy: .window, windowDays: 3)
        let configured = try Forger.next(.deviceConfigured(settings), origin: "watch", after: phone, key: watchKey)
        #expect(throws: Never.self) { try configured.checkWellFormed() }
        let result = try phone.importEvents([configured], from: "the watch")
        #expect(result.imported == 1 && result.setAside == 0, "\(result)")
        #expect(try phone.setAsideEvents().isEmpty)
        #expect(try phone.deviceState("watch").settings.timeZone == "Mars/Olympus")
        // Its reminders are planned in UTC here: 09:30 UTC on each of the window's days.
        let (_, plan) = try phone.reading { try $0.pendingPlan(device: "watch", now: now) }
        let fires = plan.requests.compactMap(\.nextFireAt).map(\.rfc3339)
        #expect(fires == ["2026-11-06T09:30:00Z", "2026-11-07T09:30:00Z"], "\(fires)")
        // The peer folds it the same way; both verify clean and agree.
        _ = try laptop.sync(with: phone)
        #expect(try laptop.deviceState("watch").settings.timeZone == "Mars/Olympus")
        #expect(try laptop.digest() == phone.digest())
        for store in [phone, laptop] {
            try store.rebuild()
            #expect(try store.verify().isClean)
            #expect(try store.deviceState("watch").settings.timeZone == "Mars/Olympus")
        }
    }

    @Test func aBadlySpelledZoneFromAPeerIsSetAsideNotFolded() throws {
        let dir = TemporaryDirectory()
        let watchKey = SigningKey.generate()
        let (phone, _) = try ClockBoundTests.ledger(dir, thief: watchKey, at: now)
        let configured = try Forger.next(.deviceConfigured(DeviceConfigured(timeZone: "../../etc/localtime")), origin: "watch", after: phone, key: watchKey)
        let result = try phone.importEvents([configured], from: "the watch")
        #expect(result.imported == 1 && result.setAside == 1, "\(result)")
        #expect(try phone.deviceState("watch").settings.timeZone == "UTC")
    }
}
