import CMicroHTTPD
import Dispatch
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// An HTTP/1.1 server on one address, calling a handler for each complete request: the only code
/// that calls libmicrohttpd.
///
/// It listens as soon as it is made, on exactly the address of `Options.host` (loopback unless
/// told otherwise), with TLS when given a certificate and key. Requests are read whole, body
/// included, before the handler sees them; a body over `Options.maxBodyBytes` is answered 413
/// without calling the handler. The handler runs on one of the server's threads and may block
/// (on a database query, say): it holds that thread meanwhile, so at most `Options.threads`
/// handlers run at once, or one per connection when `threads` is 0 (see `Options.threads`).
///
/// `stop()` stops it gracefully; a server that is released without being stopped is stopped then.
public final class HTTPServer: Sendable {
    /// A certificate chain and its private key, both PEM-encoded, for serving HTTPS.
    public struct TLS: Sendable {
        /// The server's certificate, then any intermediate certificates, PEM-encoded.
        public var certificatePEM: String
        /// The certificate's private key, PEM-encoded, unencrypted.
        public var keyPEM: String

        /// A certificate chain and its key.
        public init(certificatePEM: String, keyPEM: String) {
            self.certificatePEM = certificatePEM
            self.keyPEM = keyPEM
        }
    }

    /// How the server listens and what it accepts.
    public struct Options: Sendable {
        /// The numeric IPv4 or IPv6 address to listen on; only that address is bound.
        /// A non-loopback one (`0.0.0.0` included) needs `tls` or `allowPlainRemote`.
        public var host: String
        /// The port to listen on; 0 lets the system choose a free one (read it from `HTTPServer.port`).
        public var port: UInt16
        /// The largest request body accepted, in bytes; a larger one is answered 413.
        public var maxBodyBytes: Int
        /// The most connections open at once; more are refused.
        public var maxConnections: Int
        /// How many threads serve connections and run the handler; 0 for a thread per connection.
        ///
        /// A pool's threads take connections as they arrive, not by load, and a thread serves
        /// its connections one handler call at a time: a handler that blocks holds back the other
        /// connections of its thread too (eight connections whose handlers block 200 ms each were
        /// seen to take from 0.4 s to 1.6 s with a pool of four). Handlers that block for long
        /// are better served by a thread per connection, bounded by `maxConnections`.
        public var threads: Int
        /// Seconds a connection may stay idle before it is closed; 0 for no limit.
        public var connectionTimeout: Int
        /// The most connections open at once from one client address; more from it are closed
        /// as they are accepted (0 for no limit other than `maxConnections`).
        public var maxConnectionsPerAddress: Int = 0
        /// Seconds a request may take from its first line to the end of its body (checked as its
        /// headers complete and as each piece of its body arrives); past it, the connection is
        /// closed unanswered. 0 for no limit.
        public var requestDeadline: Int = 0
        /// The certificate and key to serve HTTPS with; nil for plain HTTP.
        public var tls: TLS?
        /// Whether plain HTTP may be served on a non-loopback address (behind a TLS-terminating
        /// proxy on the same network, say). Without it such a server refuses to start.
        public var allowPlainRemote: Bool

        /// Options with the given values; by default a loopback server on a free port.
        public init(
            host: String = "127.0.0.1", port: UInt16 = 0, maxBodyBytes: Int = 8 << 20, maxConnections: Int = 256, threads: Int = 4,
            connectionTimeout: Int = 30, tls: TLS? = nil, allowPlainRemote: Bool = false
        ) {
            self.host = host
            self.port = port
            self.maxBodyBytes = maxBodyBytes
            self.maxConnections = maxConnections
            self.threads = threads
            self.connectionTimeout = connectionTimeout
            self.tls = tls
            self.allowPlainRemote = allowPlainRemote
        }
    }

    /// The running daemon and what must outlive it.
    private struct Running {
        let daemon: OpaquePointer
        let context: Unmanaged<ServerContext>
        /// The certificate and key handed to libmicrohttpd, freed after the daemon stops.
        let credentials: [UnsafeMutablePointer<CChar>]
        /// Every half second, cuts requests whose headers are not in by the deadline.
        let sweeper: DispatchSourceTimer?
    }

    /// The port the server listens on: `Options.port`, or the one the system chose for port 0.
    public let port: UInt16
    /// The address and port listened on, as messages show them: `127.0.0.1:8080`, `[::1]:8080`.
    public let endpoint: String
    private let running: Mutex<Running?>
    private let context: ServerContext

    /// Starts listening and serving: `handler` is called with every complete request and its
    /// answer is sent. Throws, with the reason, when an option is invalid, when plain HTTP would
    /// be served on a non-loopback address without `allowPlainRemote`, when TLS is asked for but
    /// libmicrohttpd lacks it, and when the server cannot start (the address is in use, the
    /// certificate or key is unusable, …).
    public init(options: Options = Options(), handler: @escaping @Sendable (HTTPRequest) -> HTTPResponse) throws(HTTPServerError) {
        guard options.maxBodyBytes >= 0 else { throw HTTPServerError(.invalidOptions, "maxBodyBytes must not be negative") }
        guard options.maxConnections >= 1 && options.maxConnections <= Int(UInt32.max) else {
            throw HTTPServerError(.invalidOptions, "maxConnections must be at least 1, not \(options.maxConnections)")
        }
        guard options.maxConnectionsPerAddress >= 0 && options.maxConnectionsPerAddress <= Int(UInt32.max) else {
            throw HTTPServerError(
                .invalidOptions, "maxConnectionsPerAddress must be 0 (no limit) or more, not \(options.maxConnectionsPerAddress)")
        }
        guard options.requestDeadline >= 0 && options.requestDeadline <= 86_400 else {
            throw HTTPServerError(.invalidOptions, "requestDeadline must be 0 (no limit) to 86400 seconds, not \(options.requestDeadline)")
        }
        guard options.threads >= 0 && options.threads <= 1024 else {
            throw HTTPServerError(.invalidOptions, "threads must be between 0 (a thread per connection) and 1024, not \(options.threads)")
        }
        guard options.connectionTimeout >= 0 && options.connectionTimeout <= Int(UInt32.max) else {
            throw HTTPServerError(
                .invalidOptions, "connectionTimeout must be a number of seconds, 0 or more, not \(options.connectionTimeout)")
        }
        let address = try ListenAddress(host: options.host, port: options.port)
        if !address.isLoopback && options.tls == nil && !options.allowPlainRemote {
            throw HTTPServerError(
                .plainRemoteRefused,
                "refusing to serve plain HTTP on \(address.display(port: options.port)), which is not a loopback address: "
                    + "give a TLS certificate and key, or allow plain HTTP on a remote address (allowPlainRemote) "
                    + "if a TLS-terminating proxy stands in front"
            )
        }
        if let tls = options.tls {
            guard MHD_is_feature_supported(.FEATURE_TLS) == .YES else {
                throw HTTPServerError(
                    .tlsUnsupported, "TLS was asked for but the installed libmicrohttpd was built without TLS support (GnuTLS)")
            }
            guard tls.certificatePEM.contains("-----BEGIN"), tls.keyPEM.contains("-----BEGIN") else {
                throw HTTPServerError(.invalidOptions, "the TLS certificate and key must both be PEM-encoded (-----BEGIN …)")
            }
        }

        var flags = MHD_USE_ERROR_LOG.rawValue | MHD_USE_AUTO.rawValue | MHD_USE_INTERNAL_POLLING_THREAD.rawValue
        flags |= MHD_USE_ITC.rawValue  // lets stop() quiesce the daemon in every thread mode
        if options.threads == 0 { flags |= MHD_USE_THREAD_PER_CONNECTION.rawValue }
        if address.isIPv6 { flags |= MHD_USE_IPv6.rawValue }
        if options.tls != nil { flags |= MHD_USE_TLS.rawValue }

        var items = [
            MHD_OptionItem(option: .CONNECTION_LIMIT, value: options.maxConnections, ptr_value: nil),
            MHD_OptionItem(option: .CONNECTION_TIMEOUT, value: options.connectionTimeout, ptr_value: nil),
        ]
        if options.maxConnectionsPerAddress > 0 {
            items.append(MHD_OptionItem(option: .PER_IP_CONNECTION_LIMIT, value: options.maxConnectionsPerAddress, ptr_value: nil))
        }
        if options.threads > 1 {
            items.append(MHD_OptionItem(option: .THREAD_POOL_SIZE, value: options.threads, ptr_value: nil))
        }
        var credentials: [UnsafeMutablePointer<CChar>] = []
        if let tls = options.tls {
            let certificate = strdup(tls.certificatePEM)!
            let key = strdup(tls.keyPEM)!
            credentials = [certificate, key]
            items.append(MHD_OptionItem(option: .HTTPS_MEM_CERT, value: 0, ptr_value: UnsafeMutableRawPointer(certificate)))
            items.append(MHD_OptionItem(option: .HTTPS_MEM_KEY, value: 0, ptr_value: UnsafeMutableRawPointer(key)))
        }
        items.append(MHD_OptionItem(option: .END, value: 0, ptr_value: nil))

        let context = ServerContext(handler: handler, maxBodyBytes: options.maxBodyBytes, requestDeadline: options.requestDeadline)
        let retained = Unmanaged.passRetained(context)
        let daemon = address.withSocketAddress { socketAddress in
            items.withUnsafeMutableBufferPointer { items in
                chttp_start_daemon(
                    flags, options.port, socketAddress, accessHandler, requestCompleted, requestStarted, logMessage, retained.toOpaque(),
                    items.baseAddress)
            }
        }
        guard let daemon else {
            retained.release()
            for pointer in credentials { free(pointer) }
            let reasons = context.takeMessages()
            throw HTTPServerError(
                .startFailed,
                "could not start the HTTP server on \(address.display(port: options.port))"
                    + (reasons.isEmpty ? "" : ": " + reasons.joined(separator: "; ")))
        }
        _ = context.takeMessages()
        let bound = chttp_bound_port(daemon)
        self.port = bound != 0 ? bound : options.port
        self.endpoint = address.display(port: port)
        self.context = context
        var sweeper: DispatchSourceTimer?
        if options.requestDeadline > 0 {
            let timer = DispatchSource.makeTimerSource(queue: DispatchQueue.global(qos: .utility))
            timer.schedule(deadline: .now() + .milliseconds(500), repeating: .milliseconds(500))
            timer.setEventHandler { context.sweep() }
            timer.resume()
            sweeper = timer
        }
        self.running = Mutex(Running(daemon: daemon, context: retained, credentials: credentials, sweeper: sweeper))
    }

    deinit { stop() }

    /// Stops the server gracefully, and returns once it has stopped: new connections are refused
    /// at once, requests already being read or handled are finished and answered (for up to
    /// `gracePeriod`), then every connection is closed and the threads end. A handler still
    /// running when the grace period ends is waited for, but its answer is not sent. Calling it
    /// again, or from several threads, is harmless: every call returns once the server has
    /// stopped. It must not be called from the handler, whose thread it waits for.
    public func stop(gracePeriod: Duration = .seconds(10)) {
        running.withLock { running in
            guard let current = running else { return }
            running = nil
            let listening = MHD_quiesce_daemon(current.daemon)
            // The quiesced socket may not be closed before the daemon stops, but it can stop
            // listening now: connections made from here on are refused rather than left waiting.
            if listening >= 0 { shutdown(listening, Int32(SHUT_RD)) }
            let deadline = ContinuousClock.now + gracePeriod
            while current.context.takeUnretainedValue().requestsInFlight > 0 && ContinuousClock.now < deadline {
                usleep(2_000)
            }
            current.sweeper?.cancel()
            MHD_stop_daemon(current.daemon)
            if listening >= 0 { close(listening) }
            current.context.release()
            for pointer in current.credentials { free(pointer) }
        }
    }

    /// The number of requests begun and not yet completed (their answer not yet sent).
    public var requestsInFlight: Int { context.requestsInFlight }
}
