import Foundation
import Testing

@testable import GoalLedger

/// Every register of a goal (`GoalRegister.allCases`, so a new one is tested as soon as it is
/// declared): written concurrently on two devices, it shows in `conflicts`, the audit tells the
/// overwrite, and the goal's JSON form holds the value that won.
struct GoalRegisterTests {
    static let goal = UUID(uuidString: "7E0F1D2C-3B4A-4596-8877-665544332211")!
    let created = instant("2026-11-02T08:00:00Z")
    let cloned = instant("2026-11-02T09:00:00Z")
    let phoneWrites = instant("2026-11-03T10:00:00Z")
    let tabletWrites = instant("2026-11-03T11:00:00Z")

    /// A measurable daily goal with no reminder: every register has a value its creation wrote.
    static var creation: Payload {
        .goalCreated(GoalCreated(goal: goal, title: "Run", cadence: .daily, progressKind: .measurable, target: try! Amount("2"), unit: "km"))
    }

    /// An event that writes `register` of the goal, `variant` telling two writes apart.
    static func write(_ register: GoalRegister, _ variant: Int) -> Payload {
        switch register {
        case .title: .goalEdited(GoalEdited(goal: goal, title: "Run \(variant)"))
        case .details: .goalEdited(GoalEdited(goal: goal, details: "Note \(variant)"))
        case .cadence: .goalEdited(GoalEdited(goal: goal, cadence: variant == 1 ? .weekly : .monthly))
        case .targetDate: .goalEdited(GoalEdited(goal: goal, targetDate: day("2027-0\(variant)-01")))
        case .target: .goalEdited(GoalEdited(goal: goal, target: try! Amount(whole: Int64(4 + variant))))
        case .unit: .goalEdited(GoalEdited(goal: goal, unit: "unit \(variant)"))
        case .reminder: .reminderSet(ReminderSet(goal: goal, hour: 6 + variant, minute: 15))
        case .deleted: .goalDeleted(GoalDeleted(goal: goal))
        case .position:
            // With its key given, as the store fills it in at append.
            .goalMoved(GoalMoved(goal: goal, placement: variant == 1 ? .first : .last, key: PositionKey([UInt8(0x10 * variant)]), replaces: nil))
        }
    }

    /// The member of the goal's JSON form that holds `register`.
    static func member(_ register: GoalRegister, of json: JSONValue) -> JSONValue? {
        register.place == .progress ? json["progress"]?[register.rawValue] : json[register.rawValue]
    }

    @Test(arguments: GoalRegister.allCases)
    func concurrentWritesConflictAreAuditedAsOverwritesAndTheWinnerIsInTheGoalJSON(_ register: GoalRegister) throws {
        let dir = TemporaryDirectory()
        let phone = try LedgerStore.create(at: dir.path + "/phone", device: "phone")
        try phone.append([EventDraft(payload: Self.creation)], now: created)
        let tablet = try phone.clone(to: dir.path + "/tablet", device: "tablet", now: cloned)
        // Neither device has seen the other's write; the tablet's is later in canonical order.
        try phone.append([EventDraft(payload: Self.write(register, 1))], now: phoneWrites)
        try tablet.append([EventDraft(payload: Self.write(register, 2))], now: tabletWrites)
        _ = try phone.sync(with: tablet)

        for store in [phone, tablet] {
            let conflicts = try store.conflicts(goal: Self.goal)
            #expect(conflicts.map(\.field) == [register], "\(store.device): \(conflicts.map(\.json))")
            let conflict = try #require(conflicts.first)
            #expect(conflict.winner.device == "tablet" && conflict.overwritten.map(\.device) == ["phone"])
            #expect(conflict.json["field"] == .string(register.rawValue))

            let steps = try store.audit(goal: Self.goal)
            let phoneStep = try #require(steps.first { $0.event.origin == "phone" && $0.event.type == Self.write(register, 1).type })
            let tabletStep = try #require(steps.first { $0.event.origin == "tablet" && $0.event.type == Self.write(register, 2).type })
            #expect(tabletStep.overwrote.map(\.field) == [register.rawValue])
            #expect(tabletStep.overwrote.map(\.event) == [phoneStep.event.id])
            #expect(tabletStep.overwrote.map(\.value) == [conflict.overwritten[0].value])
            #expect(phoneStep.supersededBy.map(\.field) == [register.rawValue])
            #expect(phoneStep.supersededBy.map(\.event) == [tabletStep.event.id])
            #expect(tabletStep.changes.map(\.field) == [register.rawValue])

            let state = try store.goalState(Self.goal)
            #expect(Self.member(register, of: state.json) == conflict.winner.value, "\(JSONWriter.message(state.json))")
            #expect(state.stamp(of: register)?.event == tabletStep.event.id)
            #expect(try store.verify().isClean)
        }
    }

    /// The stored header keeps every register, with its stamp, as the table writes it.
    @Test func theStoredHeaderKeepsEveryRegister() throws {
        var state = GoalState(id: Self.goal)
        state.apply(event(1, Self.creation))
        var writes: [GoalRegister: UUID] = [:]
        for (i, register) in GoalRegister.allCases.enumerated() {
            let e = event(UInt8(i + 2), Self.write(register, 1))
            state.apply(e)
            writes[register] = e.id
        }
        let bytes = ProjectionCodec.encodeHeader(state)
        let decoded = try bytes.withUnsafeBytes { (b) throws(RecordDecodingError) in try ProjectionCodec.decodeHeader(b, id: Self.goal) }
        for register in GoalRegister.allCases {
            #expect(state.lastWrite(of: register)?.event == writes[register], "\(register)")
            #expect(decoded.lastWrite(of: register) == state.lastWrite(of: register), "\(register)")
            #expect(decoded.cell(register).value == state.cell(register).value, "\(register)")
            #expect(decoded.cell(register).json == state.cell(register).json, "\(register)")
        }
        #expect(ProjectionCodec.encodeHeader(decoded) == bytes)
    }

    /// A header's status as read from a state (a header the batch holds) is what its stored
    /// bytes give: before the goal exists, created, deleted, and restored.
    @Test func theStatusOfAStateIsTheStatusItsStoredBytesGive() {
        var state = GoalState(id: Self.goal)
        let deletion = event(2, .goalDeleted(GoalDeleted(goal: Self.goal)))
        let steps: [Event?] = [
            nil, event(1, Self.creation), deletion, event(3, .goalRestored(GoalRestored(goal: Self.goal, replaces: deletion.id))),
        ]
        var seen: [String] = []
        for step in steps {
            if let step { state.apply(step) }
            let stored = ProjectionCodec.encodeHeader(state).withUnsafeBytes { ProjectionCodec.decodeStatus($0) }
            let read = state.readStatus()
            #expect(read?.deleted == stored?.deleted && read?.kind == stored?.kind && read?.deletionHistory == stored?.deletionHistory)
            #expect((read == nil) == (stored == nil))
            seen.append(read.map { "\($0.deleted) \($0.kind) \($0.deletionHistory)" } ?? "none")
        }
        // The steps reach every status they should (not one state four times).
        #expect(seen == ["none", "false measurable false", "true measurable true", "false measurable true"], "\(seen)")
    }

    /// Each register has its own stored bit, clear of the progress kind's, the reminder
    /// devices' and the creation time's; each field `goalEdited` changes is the register of the same name.
    @Test func storedBitsAreDistinctAndFieldsAreTheirRegisters() {
        let bits = ProjectionCodec.HeaderPart.stored.map(\.bit)
        #expect(Set(bits).count == GoalRegister.allCases.count + 3)
        #expect(bits == bits.sorted())
        #expect(GoalField.allCases.allSatisfy { $0.rawValue == $0.register.rawValue })
        #expect(Set(GoalField.allCases.map(\.register)).count == GoalField.allCases.count)
        #expect(GoalField.stored.map(\.storedCode) == GoalField.stored.map(\.storedCode).sorted())
    }

    /// The phone's event number `n`, written `n` seconds into the epoch.
    func event(_ n: UInt8, _ payload: Payload) -> Event {
        Event(
            id: UUID(uuid: (0, 0, 0, 0, 0, 0, 0x40, 0, 0x80, 0, 0, 0, 0, 0, 0, n)), origin: "phone", sequence: UInt64(n),
            hlc: HLC(milliseconds: 1000 * Int64(n), counter: 0), at: Instant(milliseconds: 1000 * Int64(n)), schema: 2, payload: payload)
    }
}
