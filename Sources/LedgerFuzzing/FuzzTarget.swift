import Foundation
import GoalLedger

/// The fuzz targets: each feeds arbitrary bytes to one of the ledger's readers of outside input,
/// as the ledger itself reads that input, and checks what it can cheaply check of the result.
///
/// A thrown error is the right answer to a bad input and is swallowed; a trap (an integer
/// overflow, an index out of range, a failed precondition) is a finding, and so is a broken
/// invariant, which the target reports with `fatalError` (a value read, written and read again
/// that differs, an answer that is not what the protocol allows).
public enum FuzzTarget: String, CaseIterable, Sendable {
    /// One or more lines of `ledger append` input: JSON, then the event gate.
    case eventLine = "event-line"
    /// A stored event record (the binary codec, amounts included).
    case record
    /// A change set and a sync state in their byte forms.
    case changeSet = "change-set"
    /// One HTTP request to the sync service in front of a test hub, and its answer.
    case serviceRequest = "service-request"
    /// Structured fields, Signature-Input and Signature, Content-Digest.
    case signature
    /// A scenario file (`ledger scenario run`).
    case scenario
    /// The notification center file of the command line and scenarios.
    case centerFile = "center-file"
    /// A relay token as an app keeps it between runs (its `Codable` JSON form).
    case relayToken = "relay-token"
    /// A row of the store's own tables (a damaged disk or a copied store is outside input).
    case storedRow = "stored-row"
    /// A store's whole data file (`data.mdb`), read without LMDB: the page walk, the checks of
    /// every open, and the salvage of `recover`.
    case dataFile = "data-file"
    /// A row of a store's projection replaced or altered, then every read, an append, and the
    /// rebuild that repairs it.
    case projectionRow = "projection-row"

    /// Runs the target on one input.
    public func run(_ bytes: UnsafeRawBufferPointer) {
        switch self {
        case .eventLine: EventLineTarget.run(bytes)
        case .record: RecordTarget.run(bytes)
        case .changeSet: ChangeSetTarget.run(bytes)
        case .serviceRequest: ServiceRequestTarget.run(bytes)
        case .signature: SignatureTarget.run(bytes)
        case .scenario: ScenarioTarget.run(bytes)
        case .centerFile: CenterFileTarget.run(bytes)
        case .relayToken: RelayTokenTarget.run(bytes)
        case .storedRow: StoredRowTarget.run(bytes)
        case .dataFile: DataFileTarget.run(bytes)
        case .projectionRow: if let broken = ProjectionDamageCheck.run(bytes) { violated(broken) }
        }
    }

    /// Runs the target on one input.
    public func run(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { run($0) }
    }

    /// Whatever the target needs before its first input (the service's test hub); throws when
    /// it cannot be had.
    public func prepare() throws {
        if self == .serviceRequest { try ServiceRequestTarget.prepare() }
    }
}

/// A broken invariant: the input and what went wrong, then a trap.
func violated(_ what: String, file: StaticString = #file, line: UInt = #line) -> Never {
    fatalError("fuzz invariant broken: \(what)", file: file, line: line)
}
