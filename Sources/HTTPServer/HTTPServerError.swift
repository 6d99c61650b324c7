/// Why an `HTTPServer` could not be started.
public struct HTTPServerError: Error, CustomStringConvertible, Sendable {
    /// The kinds of failure, for callers that answer them differently.
    public enum Kind: Sendable, Equatable {
        /// An option is out of range, or the host is not a numeric IPv4 or IPv6 address.
        case invalidOptions
        /// The host is not a loopback address, no TLS was given, and plain remote HTTP was not allowed.
        case plainRemoteRefused
        /// TLS was asked for but the installed libmicrohttpd was built without it.
        case tlsUnsupported
        /// libmicrohttpd could not start: the address is in use, the certificate or key is
        /// unreadable, threads could not be made, ….
        case startFailed
    }

    /// What kind of failure this is.
    public let kind: Kind
    /// The message, in full: what failed and, where known, why.
    public let message: String

    /// An error of the given kind with its message.
    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    /// The message.
    public var description: String { message }
}
