#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A numeric IPv4 or IPv6 address and a port, as the socket address the server binds.
struct ListenAddress {
    private var storage = sockaddr_storage()
    /// Whether it is an IPv6 address (the daemon then needs its IPv6 flag).
    let isIPv6: Bool
    /// Whether it is a loopback address: 127.0.0.0/8, `::1`, or `::ffff:127.x.x.x`.
    let isLoopback: Bool
    /// The address as given, without brackets.
    let literal: String

    /// Parses `host`, a numeric address (an IPv6 one with or without brackets); throws for
    /// anything else, host names included: the server binds exactly the address it is given.
    init(host: String, port: UInt16) throws(HTTPServerError) {
        var literal = host
        if literal.hasPrefix("[") && literal.hasSuffix("]") { literal = String(literal.dropFirst().dropLast()) }
        var v4 = in_addr()
        var v6 = in6_addr()
        if inet_pton(AF_INET, literal, &v4) == 1 {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            address.sin_addr = v4
            withUnsafeMutableBytes(of: &storage) { target in
                withUnsafeBytes(of: address) { target.copyMemory(from: $0) }
            }
            isIPv6 = false
            isLoopback = UInt32(bigEndian: v4.s_addr) >> 24 == 127
            self.literal = literal
        } else if inet_pton(AF_INET6, literal, &v6) == 1 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = port.bigEndian
            address.sin6_addr = v6
            withUnsafeMutableBytes(of: &storage) { target in
                withUnsafeBytes(of: address) { target.copyMemory(from: $0) }
            }
            let bytes = withUnsafeBytes(of: v6) { Array($0) }
            let loopback: [UInt8] = Array(repeating: 0, count: 15) + [1]
            let mappedPrefix: [UInt8] = Array(repeating: 0, count: 10) + [0xFF, 0xFF]
            isIPv6 = true
            isLoopback = bytes == loopback || (Array(bytes[0..<12]) == mappedPrefix && bytes[12] == 127)
            self.literal = literal
        } else {
            throw HTTPServerError(
                .invalidOptions,
                "the host to listen on must be a numeric IPv4 or IPv6 address (such as 127.0.0.1 or ::1), not \"\(host)\""
            )
        }
    }

    /// How messages show it with `port`: `127.0.0.1:8080`, `[::1]:8080`.
    func display(port: UInt16) -> String { isIPv6 ? "[\(literal)]:\(port)" : "\(literal):\(port)" }

    /// Calls `body` with the address as a `sockaddr`, valid only during the call.
    func withSocketAddress<Result>(_ body: (UnsafePointer<sockaddr>) -> Result) -> Result {
        withUnsafeBytes(of: storage) { body($0.baseAddress!.assumingMemoryBound(to: sockaddr.self)) }
    }

    /// The numeric host of a peer's socket address (`127.0.0.1`, `::1`), or `""` if it cannot be shown.
    static func numericHost(of address: UnsafePointer<sockaddr>) -> String {
        let length: socklen_t
        switch Int32(address.pointee.sa_family) {
        case AF_INET: length = socklen_t(MemoryLayout<sockaddr_in>.size)
        case AF_INET6: length = socklen_t(MemoryLayout<sockaddr_in6>.size)
        default: return ""
        }
        return withUnsafeTemporaryAllocation(of: CChar.self, capacity: Int(NI_MAXHOST)) { host in
            guard getnameinfo(address, length, host.baseAddress, socklen_t(host.count), nil, 0, NI_NUMERICHOST) == 0 else { return "" }
            return String(cString: host.baseAddress!)
        }
    }
}
