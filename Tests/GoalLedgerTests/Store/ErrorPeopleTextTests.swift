import Foundation
import Testing

@testable import GoalLedger

/// What an app shows people: a short text without ids, paths or keys, while the message keeps
/// the detail for logs and the command line.
struct ErrorPeopleTextTests {
    let now = instant("2026-11-05T12:00:00Z")
    struct Unplugged: Error {}

    /// Whether `text` quotes an id, a path or a key an app must not show people.
    func quotesDetail(_ text: String, _ details: [String]) -> Bool {
        details.contains { !$0.isEmpty && text.contains($0) }
            || text.range(of: "[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-", options: .regularExpression) != nil
            || text.range(of: "[0-9a-f]{32}", options: .regularExpression) != nil
            || text.contains("/")
    }

    /// The three people texts of `error`, each checked free of detail; returns them.
    func peopleTexts(_ error: LedgerError, details: [String] = [], sourceLocation: SourceLocation = #_sourceLocation) -> [String] {
        let texts = [error.errorDescription, error.failureReason, error.recoverySuggestion].compactMap { $0 }
        #expect(!texts.isEmpty, sourceLocation: sourceLocation)
        for text in texts {
            #expect(!quotesDetail(text, details), "\(text)", sourceLocation: sourceLocation)
            #expect(text.hasSuffix("."), "\(text)", sourceLocation: sourceLocation)
        }
        return texts
    }

    @Test func aFieldErrorIsALocalizedErrorForPeople() throws {
        do {
            _ = try Amount(.nan)
            Issue.record("NaN was taken as an amount")
        } catch {
            let shown: any Error = error
            #expect(shown.localizedDescription == "The amount must be a number between -1e12 and 1e12.")
            #expect(error.description == #"field "amount": must be a number between -1e12 and 1e12, got nan"#)
        }
        #expect(FieldError("timeZone", #"must be an IANA time zone such as Europe/Berlin, got "Mars""#).peopleText
            == "The time zone must be an IANA time zone such as Europe/Berlin.")
        #expect(FieldError("reminder.hour", "must be between 0 and 23, got 24").peopleText == "The reminder hour must be between 0 and 23.")
        #expect(FieldError("tags[3]", "must be 1 to 64 characters, not blank").peopleText == "The tag must be 1 to 64 characters, not blank.")
        #expect(FieldError(nil, "goal 5F0C… already exists").peopleText == "The change is not valid.")
        #expect(FieldError.unknownGoal(UUID()).peopleText == "This goal is not on this device (yet).")
    }

    @Test func anInvalidTypedCallSaysWhichFieldInWords() throws {
        let t = try TemporaryStore()
        let long = String(repeating: "a", count: 201)
        let e = try #require(ledgerError { try t.store.createGoal(title: long, now: now) })
        #expect(e.message == #"event 1 of the batch: field "title": must be 1 to 200 characters, got 201"#)
        #expect(peopleTexts(e) == ["This change could not be saved.", "The title must be 1 to 200 characters.", "Check the title and try again."])
        #expect(e.description == e.message)
        let goal = UUID()
        let unknown = try #require(ledgerError { _ = try t.store.write { try $0.recordCompletion(goal, now: now) } })
        #expect(unknown.message.contains(goal.uuidString))
        #expect(peopleTexts(unknown, details: [goal.uuidString]).contains("This goal is not on this device (yet)."))
    }

    @Test func aStoreThatExistsIsItsOwnReason() throws {
        let t = try TemporaryStore()
        let path = t.directory.path + "/store"
        let e = try #require(ledgerError { _ = try LedgerStore.create(at: path, device: "laptop") })
        #expect(e.reason == .storeExists(path: path))
        #expect(e.message == "a ledger store already exists at \(path)")
        #expect(peopleTexts(e, details: [path]).first == "Goals data is already there.")
        // Nothing was changed: the store is the phone's, as before.
        #expect(try LedgerStore.open(at: path).device == "phone")
    }

    @Test func aDeviceNobodyEnrolledIsToldSoWithItsKey() throws {
        let t = try TemporaryStore()
        try t.store.createGoal(title: "Read", now: now)
        let watch = try LedgerStore.create(at: t.directory.path + "/watch", device: "watch", ledger: t.store.ledgerID)
        _ = try watch.sync(with: t.store)
        let key = try #require(try watch.publicKey())
        let e = try #require(ledgerError { try watch.createGoal(title: "Walk", now: now) })
        #expect(e.reason == .deviceNotEnrolled(device: "watch", publicKey: key), "\(e)")
        #expect(e.code == .store)
        #expect(e.message.contains("is not enrolled"))
        _ = peopleTexts(e, details: [t.store.ledgerID.uuidString, Hex.string(key), watch.path])
        // Once the phone enrols it and they sync, it writes.
        try t.store.enrol(device: "watch", publicKey: key, now: now)
        _ = try watch.sync(with: t.store)
        try watch.createGoal(title: "Walk", now: now)
    }

    @Test func everyReasonHasTextsWithoutDetail() throws {
        let goal = UUID()
        let path = "/var/mobile/store"
        let key = [UInt8](repeating: 0xAB, count: 32)
        let reasons: [LedgerError] = [
            LedgerError("goal \(goal.uuidString) is at version 3, expected 2", reason: .versionConflict(goal: goal, expected: 2, actual: 3)),
            LedgerError("goal \(goal.uuidString): title", reason: .fieldVersionConflict(goal: goal, field: .title)),
            LedgerError.noStore(at: path),
            LedgerError("a ledger store already exists at \(path)", reason: .storeExists(path: path)),
            LedgerError("device watch is not enrolled", reason: .deviceNotEnrolled(device: "watch", publicKey: key)),
            LedgerError.signingKeyMissing(device: "phone", path: path),
            LedgerError("revoked", reason: .deviceRevoked(device: "phone", after: 3)),
            LedgerError("untrusted", reason: .signerNotTrusted(device: "phone")),
            LedgerError("restored", reason: .restoredFromBackup(device: "phone")),
            LedgerError("a projection row is damaged", reason: .projectionDamaged),
            LedgerError.storeDamaged(at: path, "page 7"),
            LedgerError("newer schema", reason: .needsMigration),
            LedgerError("unreachable", reason: .peerUnreachable(peer: "https://sync.example.com")),
            LedgerError("401", reason: .serviceRefused(peer: "https://sync.example.com", status: 401)),
            LedgerError("413", reason: .serviceRefused(peer: "https://sync.example.com", status: 413)),
            LedgerError("403", reason: .serviceRefused(peer: "https://sync.example.com", status: 403)),
            LedgerError.notificationCenterFailed("center", Unplugged()),
            LedgerError.damaged("the goal index names position 4, which holds no event", position: 4),
            LedgerError("the event at position 4 is damaged", reason: .storeDamaged(position: 4)),
            LedgerError("\(path) is not a hub", reason: .hubNotInitialized(hub: path)),
            LedgerError("the hub at \(path) refused", reason: .hubAccessNotGranted(hub: path)),
            LedgerError(.internal, "a bug at \(path)"),
            LedgerError(.invalidArgument, "bad \(path)"),
        ]
        var headlines: Set<String> = []
        for error in reasons {
            let texts = peopleTexts(error, details: [path, goal.uuidString, Hex.string(key), "sync.example.com"])
            headlines.insert(texts[0])
            #expect(error.description == error.message)
        }
        // Reasons an app tells apart read differently to people too.
        #expect(headlines.count >= 15)
    }
}
