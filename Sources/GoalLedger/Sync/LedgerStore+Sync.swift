import Foundation

/// What `sync` moved in each direction.
public struct SyncResult: Equatable, Sendable {
    /// Events the local store received from the peer.
    public var pulled: ImportResult
    /// Events the peer received from the local store.
    public var pushed: ImportResult

    /// A result of these two imports.
    public init(pulled: ImportResult, pushed: ImportResult) {
        self.pulled = pulled
        self.pushed = pushed
    }
}

extension LedgerStore {
    /// Exchanges events with `peer` both ways: each side receives exactly the events it lacks,
    /// decided by comparing their last origin sequences. Each direction is one transaction.
    @available(*, noasync, message: "use the async form of sync(with:)")
    public func sync(with peer: LedgerStore) throws(LedgerError) -> SyncResult {
        try checkSameLedger(peer.ledgerID, source: peer.path)
        guard peer.device != device else {
            throw LedgerError(.store, "\(peer.path) is also device \(device): two stores of one ledger cannot share a device")
        }
        // The one path every transport takes: a state one way, a change set the other.
        let pulled = try exchange(from: peer, into: self)
        let pushed = try exchange(from: self, into: peer)
        return SyncResult(pulled: pulled, pushed: pushed)
    }

    /// ``sync(with:)-6ncyr``, off the caller's actor, on the store's writer queue.
    public func sync(with peer: LedgerStore) async throws(LedgerError) -> SyncResult {
        let result: Result<SyncResult, LedgerError> = await withCheckedContinuation { continuation in
            writer.async { continuation.resume(returning: Result { () throws(LedgerError) in try self.sync(with: peer) }) }
        }
        return try result.get()
    }

    /// Applies to `target` what `source` holds that it lacks.
    private func exchange(from source: LedgerStore, into target: LedgerStore) throws(LedgerError) -> ImportResult {
        let state = try target.reading { try $0.syncState() }
        let changes = try source.reading { try $0.changeSet(since: state) }
        return try target.writing { try $0.apply(changes, from: source.path) }
    }

    /// Creates a store for this ledger at `path` for a new device, holding all of this store's events.
    ///
    /// The events are copied in chunks (100,000 events each), one write transaction per chunk,
    /// in the order one import of the whole log would write them, so that memory does not grow
    /// with the log. A clone interrupted part way (a crash, a full disk) leaves a valid store of
    /// the ledger at `path` holding a prefix of each origin's events, every one verified: it
    /// opens and verifies, and a ``sync(with:)-6ncyr`` with this store completes it (or remove it
    /// and clone again).
    public func clone(to path: String, device: String, now: Instant = .systemNow) throws(LedgerError) -> LedgerStore {
        try clone(to: path, device: device, now: now, chunk: Self.cloneChunkEvents)
    }

    func checkSameLedger(_ other: UUID, source: String) throws(LedgerError) {
        guard other == ledgerID else {
            throw LedgerError(
                .store,
                "\(source) belongs to ledger \(other.uuidString), this store to \(ledgerID.uuidString): stores of different ledgers never exchange events"
            )
        }
    }
}

extension LedgerSnapshot {
    /// Writes every event of the store to an export file at `path`, readable by its owner only
    /// (atomically: a new file beside it, synced, then renamed into place); the number of events
    /// written.
    public func export(to file: String) throws(LedgerError) -> Int {
        // The change set since an empty state, its records encoded as they are read (each
        // decoded on the way, so a damaged one is refused): no event is kept in memory.
        var encoder = ExportFile.Encoder(ledger: ledgerID)
        try visitRecords(missingFrom: [:], overlap: true) { (_, bytes) throws(LedgerError) in encoder.append(bytes) }
        let bytes = encoder.finish()
        do {
            // A person's history: owner-only, like the store's own files.
            try AtomicFile.write(bytes, to: file)
        } catch {
            throw LedgerError(.invalidInput, "cannot write \(file): \(error.reason)")
        }
        return Int(encoder.count)
    }
}

extension LedgerWriter {
    /// Imports the events of an export file that this store lacks; `file` may be a regular
    /// file, a pipe or a device, read once before the write.
    public func importFile(_ file: String) throws(LedgerError) -> ImportResult {
        try apply(try ChangeSet(decoding: try ExportFile.read(file), source: file), from: file)
    }
}

extension ExportFile {
    /// The bytes of the export file at `path`, read to its end whatever it is (a regular file,
    /// a pipe such as `/dev/stdin`, a FIFO, a device), as `append` reads its input. The read
    /// stops at once when the first bytes are not an export's (`/dev/zero` is not read on).
    public static func read(_ path: String) throws(LedgerError) -> [UInt8] {
        func failed(_ why: String) -> LedgerError { LedgerError(.invalidInput, "cannot read \(path): \(why)") }
        guard let handle = FileHandle(forReadingAtPath: path) else { throw failed(String(cString: strerror(errno))) }
        defer { try? handle.close() }
        var bytes: [UInt8] = []
        do {
            while let piece = try handle.read(upToCount: 1 << 20), !piece.isEmpty {
                bytes += piece
                if bytes.count >= magic.count, Array(bytes.prefix(magic.count)) != magic {
                    throw LedgerError(.invalidInput, "\(path) is not a usable export: it does not start like a ledger export")
                }
            }
        } catch let error as LedgerError {
            throw error
        } catch {
            throw failed(error.localizedDescription)
        }
        return bytes
    }
}
