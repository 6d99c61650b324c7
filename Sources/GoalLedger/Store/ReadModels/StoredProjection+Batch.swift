import Foundation

extension StoredProjection {
    /// Folds many events in one transaction into the read models of one projection generation
    /// (append, import and rebuild all go through it, so there is one way an event reaches the
    /// stored state). It holds the models as concrete values and runs them in the order of
    /// `models`, for each event and again at `flush`:
    ///
    /// 1. `EntryModel` (`entries`, `removed`): first, so that the later models know whether an
    ///    entry counts (`FoldState.liveEntry`) and which entries the removals removed;
    /// 2. `GoalHeaderModel` (`goals`, `devices`): the headers and devices, in memory until
    ///    flushed;
    /// 3. `PendingModel` (`reminders`, `pending`): after the headers and devices are written;
    /// 4. `DigestModel` (`digest`): after the entries and headers;
    /// 5. `ViewModel` (`days`, `periods`, `runs`): last, reading all of the above.
    ///
    /// `SetAsideModel` (`setAside`) takes the events that fail the gate, which no other model
    /// sees. Between the pending and the digest models' flushes, each goal whose entries are
    /// not additive is read whole once and handed to every model (`ReadModel.recompute`).
    struct Batch {
        /// Every read model, in the order the batch runs them: between them, they own every
        /// table of a generation, each exactly once.
        static var models: [any ReadModel.Type] {
            [
                EntryModel.self, GoalHeaderModel.self, PendingModel.self, DigestModel.self, ViewModel.self, SetAsideModel.self,
            ]
        }

        private var state: FoldState
        private var entries = EntryModel()
        private var goalHeaders = GoalHeaderModel()
        private var pending = PendingModel()
        private var digest = DigestModel()
        private var views = ViewModel()
        private let setAside = SetAsideModel()

        init(tables: ProjectionTables, layout: StoreLayout) {
            state = FoldState(tables: tables, layout: layout)
        }

        /// Makes room for what folding about `events` events gathers.
        mutating func reserve(events: Int) { entries.reserve(events: events) }

        var tables: ProjectionTables { state.tables }
        /// The goal headers the batch has read or folded.
        var headers: [UUID: GoalState] { state.headers }

        /// Set by a rebuild chunk that is not the last (see `FoldState.defersRecomputing`).
        var defersRecomputing: Bool {
            get { state.defersRecomputing }
            set { state.defersRecomputing = newValue }
        }
        /// The goals a deferring chunk left for the rebuild's last transaction (`recompute`).
        var deferredGoals: Set<UUID> { state.deferred }

        /// Has `flush` compute the entry sums and days of `goals` again from their entries.
        mutating func recompute(_ goals: Set<UUID>) { state.recomputed.formUnion(goals) }

        /// The goal's header state (registers, tags, version; no entries).
        mutating func header(_ goal: UUID, _ txn: borrowing StoreTransaction) throws -> GoalState {
            if let h = state.headers[goal] { return h }
            let h = try StoredProjection.header(goal, txn, state.tables) ?? GoalState(id: goal)
            state.headers[goal] = h
            return h
        }

        mutating func device(_ name: String, _ txn: borrowing StoreTransaction) throws -> DeviceState {
            if let d = state.devices[name] { return d }
            let d = try StoredProjection.device(name, txn, state.tables)
            state.devices[name] = d
            return d
        }

        /// The three facts the rules for recording progress read (`LocalRules.prepareProgress`):
        /// whether the goal exists, is deleted, and its kind, from its header's status bytes,
        /// without making a `GoalState`; nil where those rules read the goal's header instead:
        /// the goal was ever deleted or restored (progress records which of those its author
        /// had seen, which the header holds). A header the
        /// batch holds (read, or folded: a long append holds every goal's) gives the facts its
        /// status bytes would (`ProjectionCodec.encodeHeader`).
        ///
        /// The goal is given its slot here (`FoldState.slot(of:)`), which its event, folded
        /// next, finds without a second lookup, and which keeps the status read until the
        /// goal's header changes.
        mutating func progressFacts(_ goal: UUID, _ txn: borrowing StoreTransaction) throws -> ProgressGoalFacts? {
            let slot = state.slot(of: goal)
            let status: ProjectionCodec.GoalStatus?
            if let known = state.slotStatuses[slot] {
                status = known
            } else {
                if let held = state.headers.index(forKey: goal) {
                    // Read in place: a copy of a header retains each of its tables.
                    status = state.headers.values[held].readStatus()
                } else {
                    status = try storedStatus(goal, txn)
                }
                state.slotStatuses[slot] = .some(status)
            }
            if status?.deletionHistory == true { return nil }
            return ProgressGoalFacts(exists: status != nil, deleted: status?.deleted ?? false, kind: status?.kind ?? .outcome)
        }

        /// The status bytes of the goal's stored header (nil: it has none); `progressFacts`
        /// keeps them for the batch, by the goal's slot.
        private func storedStatus(_ goal: UUID, _ txn: borrowing StoreTransaction) throws -> ProjectionCodec.GoalStatus? {
            try txn.withValue(state.tables.goals, key: goal.bytes) { ProjectionCodec.decodeStatus($0) } ?? nil
        }

        /// Folds `e`, stored at `position`. An event that fails the gate is set aside instead,
        /// and the result says so (`checked`: the caller has passed it through the gate already;
        /// `entryHash`: the digest hash of its entry, computed already, see `LogDecoder`;
        /// `entryHashLater`: where ``supplyEntryHashes(_:)`` will hand it over before the flush).
        @discardableResult
        mutating func apply(
            _ e: Event, at position: UInt64, checked: Bool = false, entryHash: DigestSum? = nil, entryHashLater: Int? = nil,
            _ txn: borrowing StoreTransaction
        ) throws -> Bool {
            state.entryHash = entryHash
            state.entryHashLater = entryHashLater
            if !checked {
                do throws(FieldError) {
                    try e.checkContent()
                } catch {
                    try setAside.setAside(at: position, error, state, txn)
                    return false
                }
            }
            try fold(e, at: position, txn)
            return true
        }

        private mutating func fold(_ e: Event, at position: UInt64, _ txn: borrowing StoreTransaction) throws {
            if state.revocations == nil || e.type == .deviceRevoked { state.revocations = try txn.revocations() }
            if let revoked = state.revocations, !revoked.isEmpty, let after = revoked[e.origin], e.sequence > after { return }
            if case .progressRecorded(let p) = e.payload {
                // Most events: the headers and pending models leave progress alone (they
                // read the goals of the batch's progress at flush, by slot).
                try entries.applyRecorded(e, p, &state, txn)
                try digest.apply(e, at: position, &state, txn)
                try views.apply(e, at: position, &state, txn)
                return
            }
            try entries.apply(e, at: position, &state, txn)
            try goalHeaders.apply(e, at: position, &state, txn)
            try pending.apply(e, at: position, &state, txn)
            try digest.apply(e, at: position, &state, txn)
            try views.apply(e, at: position, &state, txn)
        }

        /// The digest hashes of the entries folded with `entryHashLater` since the last call, by
        /// that index (nil: none was computed for it; it is computed here).
        mutating func supplyEntryHashes(_ hashes: [DigestSum?]) { digest.absorbHashes(hashes) }

        /// Writes what the batch changed, model by model in their order.
        mutating func flush(_ txn: borrowing StoreTransaction) throws {
            try entries.flush(&state, txn)
            try goalHeaders.flush(&state, txn)
            try pending.flush(&state, txn)
            try recomputeGoals(txn)
            try digest.flush(&state, txn)
            try views.flush(&state, txn)
        }

        /// Reads each goal of `FoldState.recomputed` whole, once, in key order (its live
        /// entries under the store's history rule; the others are left unread), and hands it
        /// to every model.
        private mutating func recomputeGoals(_ txn: borrowing StoreTransaction) throws {
            guard !state.recomputed.isEmpty else { return }
            let t = state.tables
            let rule = try txn.historyRule()
            for goal in state.recomputed.map({ (key: IDWords($0), goal: $0) }).sorted(by: { $0.key < $1.key }).map(\.goal) {
                let header = try state.headers[goal] ?? StoredProjection.header(goal, txn, t) ?? GoalState(id: goal)
                let whole = try txn.withEntries(
                    header, in: t, rule: rule, revoked: state.revocations, historyInEffectOnly: true)
                try entries.recompute(whole, &state, txn)
                try goalHeaders.recompute(whole, &state, txn)
                try pending.recompute(whole, &state, txn)
                try digest.recompute(whole, &state, txn)
                try views.recompute(whole, &state, txn)
            }
        }
    }
}
