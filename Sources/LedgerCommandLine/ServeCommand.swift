import Dispatch
import Foundation
import GoalLedger
import HTTPServer
import LedgerHub
import LedgerService

/// `ledger serve --hub URL [--listen HOST:PORT] [--tls-cert F --tls-key F]`: the sync service.
enum ServeCommand {
    static let hub = Option.text("--hub", "URL", "the hub's postgresql:// URL, as the service's role (see `hub grant-service`)")
    static let listen = Option.text("--listen", "HOST:PORT", "the numeric address and port to listen on (default 127.0.0.1:8080)")
    static let tlsCert = Option.text("--tls-cert", "FILE", "the TLS certificate (PEM); with --tls-key, the service speaks HTTPS")
    static let tlsKey = Option.text("--tls-key", "FILE", "the TLS private key (PEM)")
    static let maxBody = Option.integer("--max-body", "BYTES", "the largest request body (default 8388608)", minimum: 1024)
    static let perAddress = Option.integer(
        "--max-connections-per-address", "N", "the most connections open at once from one client address (default 16)", minimum: 1)
    static let maxConnections = Option.integer("--max-connections", "N", "the most connections open at once (default 256)", minimum: 1)
    static let idleTimeout = Option.integer(
        "--idle-timeout", "SECONDS", "how long a connection may send or read nothing before it is closed (default 10)", minimum: 1)
    static let requestDeadline = Option.integer(
        "--request-deadline", "SECONDS",
        "how long a request may take from its first line to the end of its body before its connection is closed (default 30)", minimum: 1)
    static let maxPullEvents = Option.integer(
        "--max-pull-events", "N",
        "the most events one pull answers with before it continues in another page (default 10000; a page ends where a signed run ends)",
        minimum: 1)
    static let founding = Option.text(
        "--founding", "open|closed", "who may found a ledger here: anyone (open, the default) or only the keys of --founder-key (closed)")
    static let founderKey = Option.text(
        "--founder-key", "HEX", "a founder's public key (64 hexadecimal digits) that may found ledgers when --founding is closed; repeat it",
        repeats: true)
    static let maxLedgerEvents = Option.integer(
        "--max-ledger-events", "N", "the most events one ledger may hold (default 1000000); a push past it is refused (413)", minimum: 1)
    static let maxLedgerBytes = Option.integer(
        "--max-ledger-bytes", "BYTES", "the most record bytes one ledger may hold (default 1073741824); a push past it is refused (413)",
        minimum: 1)
    static let requestsPerMinute = Option.integer(
        "--requests-per-minute", "N", "the requests one device key may make per minute, as a burst refilled evenly (default 1200; then 429)",
        minimum: 1)
    static let maxPushEvents = Option.integer(
        "--max-push-events", "N", "the most events one push may carry (default 10000); clients push at most 5000 at a time", minimum: 1)

    static let spec = CommandSpec(
        name: "serve", arguments: "",
        summary:
            "run the sync service in front of a hub: devices sign each request with their enrolled key; one database role serves every ledger, each request scoped to its own; stops gracefully on SIGTERM or SIGINT",
        options: [
            hub.spec, listen.spec, tlsCert.spec, tlsKey.spec, maxBody.spec, maxPushEvents.spec, maxPullEvents.spec, founding.spec, founderKey.spec,
            maxLedgerEvents.spec, maxLedgerBytes.spec, requestsPerMinute.spec, maxConnections.spec, perAddress.spec,
            idleTimeout.spec, requestDeadline.spec,
        ],
        positionals: 0...0, run: run)

    static func run(_ inv: inout Invocation) throws(LedgerError) {
        let url = try inv.required(Self.hub, by: "serve")
        guard Hub.isURL(url) else { throw LedgerError(.invalidArgument, "--hub must be a postgresql:// URL") }
        let address = try inv.value(Self.listen) ?? "127.0.0.1:8080"
        guard let colon = address.lastIndex(of: ":"), let port = UInt16(address[address.index(after: colon)...]) else {
            throw LedgerError(.invalidArgument, "--listen must be HOST:PORT with a numeric address, got \"\(address)\"")
        }
        var options = HTTPServer.Options()
        options.host = String(address[..<colon])
        options.port = port
        // Handlers wait on the database: a thread per connection (bounded by maxConnections).
        options.threads = 0
        if let limit = try inv.value(Self.maxBody) { options.maxBodyBytes = limit }
        options.maxConnections = try inv.value(Self.maxConnections) ?? 256
        options.maxConnectionsPerAddress = try inv.value(Self.perAddress) ?? 16
        options.connectionTimeout = try inv.value(Self.idleTimeout) ?? 10
        options.requestDeadline = try inv.value(Self.requestDeadline) ?? 30
        switch (try inv.value(Self.tlsCert), try inv.value(Self.tlsKey)) {
        case (let cert?, let key?):
            guard let c = FileManager.default.contents(atPath: cert), let k = FileManager.default.contents(atPath: key) else {
                throw LedgerError(.invalidArgument, "cannot read --tls-cert \(cert) or --tls-key \(key)")
            }
            options.tls = HTTPServer.TLS(certificatePEM: String(decoding: c, as: UTF8.self), keyPEM: String(decoding: k, as: UTF8.self))
        case (nil, nil):
            break
        default:
            throw LedgerError(.invalidArgument, "--tls-cert and --tls-key go together")
        }
        // The hub must be reachable and current before the service says it is ready.
        try Hub(url: url).checkSchema()
        let log: @Sendable (String) -> Void = { line in FileHandle.standardError.write(Data(("ledger serve: " + line + "\n").utf8)) }
        var serviceOptions = SyncService.Options(hubURL: url, log: log)
        if let limit = try inv.value(Self.maxPushEvents) { serviceOptions.maxPushEvents = limit }
        if let limit = try inv.value(Self.maxPullEvents) { serviceOptions.maxPullEvents = limit }
        if let limit = try inv.value(Self.maxLedgerEvents) { serviceOptions.maxLedgerEvents = limit }
        if let limit = try inv.value(Self.maxLedgerBytes) { serviceOptions.maxLedgerBytes = limit }
        if let limit = try inv.value(Self.requestsPerMinute) { serviceOptions.requestsPerMinute = limit }
        let keys = try inv.values(Self.founderKey)
        switch try inv.value(Self.founding) ?? "open" {
        case "open":
            guard keys.isEmpty else { throw LedgerError(.invalidArgument, "--founder-key goes with --founding closed") }
        case "closed":
            var allowed = Set<[UInt8]>()
            for text in keys {
                guard let key = Hex.bytes(text), key.count == 32 else {
                    throw LedgerError(.invalidArgument, "--founder-key must be a public key of 64 hexadecimal digits, got \"\(text)\"")
                }
                allowed.insert(key)
            }
            serviceOptions.founderKeys = allowed
        case let other:
            throw LedgerError(.invalidArgument, "--founding must be open or closed, got \"\(other)\"")
        }
        let service = SyncService(serviceOptions)
        let server: HTTPServer
        do {
            server = try HTTPServer(options: options) { service.handle($0) }
        } catch {
            throw LedgerError(.invalidArgument, error.description)
        }
        let scheme = options.tls == nil ? "http" : "https"
        // Said at once (not at exit, as other commands' output): whoever started the service
        // waits for this line to know it listens.
        FileHandle.standardOutput.write(
            Data("serving the ledger sync service at \(scheme)://\(server.endpoint) (hub \(Hub.redacted(url)))\n".utf8))
        // Until SIGTERM or SIGINT: then stop accepting and let requests in flight finish.
        let stop = DispatchSemaphore(value: 0)
        var sources: [DispatchSourceSignal] = []
        for s in [SIGTERM, SIGINT] {
            signal(s, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: s, queue: .global())
            source.setEventHandler { stop.signal() }
            source.resume()
            sources.append(source)
        }
        stop.wait()
        server.stop(gracePeriod: .seconds(10))
        for source in sources { source.cancel() }
        log("stopped")
    }
}
