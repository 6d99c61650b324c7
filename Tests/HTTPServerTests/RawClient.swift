import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A minimal HTTP/1.1 client over a blocking socket, so that the tests control every byte sent
/// (header order, binary bodies, chunked bodies, a `Content-Length` with no body behind it).
/// Every socket times out after a few seconds, so that no test can hang.
enum RawClient {
    /// A response as read off the socket.
    struct Response {
        var status: Int
        var headers: [(name: String, value: String)]
        var body: [UInt8]

        func header(_ name: String) -> String? { headers.first { $0.name.lowercased() == name.lowercased() }?.value }
        var text: String { String(decoding: body, as: UTF8.self) }
    }

    struct Failure: Error, CustomStringConvertible {
        var errorNumber: Int32
        var what: String
        var description: String { "\(what): \(String(cString: strerror(errorNumber))) (errno \(errorNumber))" }
        var isRefused: Bool { errorNumber == ECONNREFUSED }
    }

    /// A connected socket to `host` (numeric) on `port`.
    static func connect(port: UInt16, host: String = "127.0.0.1", timeoutSeconds: Int = 5) throws -> Int32 {
        let isIPv6 = host.contains(":")
        let fd = socket(isIPv6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(errorNumber: errno, what: "socket") }
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let rc: Int32
        if isIPv6 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = port.bigEndian
            inet_pton(AF_INET6, host, &address.sin6_addr)
            rc = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
            }
        } else {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            inet_pton(AF_INET, host, &address.sin_addr)
            rc = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        }
        if rc != 0 {
            let error = errno
            close(fd)
            throw Failure(errorNumber: error, what: "connect to \(host) port \(port)")
        }
        return fd
    }

    /// Sends `bytes` whole.
    static func send(_ fd: Int32, _ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw Failure(errorNumber: errno, what: "send") }
            sent += n
        }
    }

    /// Reads until the server closes the connection, then parses the one response read.
    static func receive(_ fd: Int32) throws -> Response {
        try parse(receiveAll(fd))
    }

    /// Reads until the server closes the connection.
    static func receiveAll(_ fd: Int32) throws -> [UInt8] {
        var data: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n == 0 { break }
            guard n > 0 else { throw Failure(errorNumber: errno, what: "recv") }
            data += buffer[0..<n]
        }
        return data
    }

    /// One request on a new connection (the request should ask to close it), and its response.
    static func exchange(port: UInt16, host: String = "127.0.0.1", _ request: [UInt8]) throws -> Response {
        let fd = try connect(port: port, host: host)
        defer { close(fd) }
        try send(fd, request)
        return try receive(fd)
    }

    /// A request's bytes: the request line, `Host`, the given fields in order, `Content-Length`
    /// when there is a body (unless `headers` says how the body is framed), `Connection: close`
    /// unless `keepAlive`.
    static func request(
        _ method: String, _ target: String, headers: [(String, String)] = [], body: [UInt8] = [], host: String = "127.0.0.1",
        keepAlive: Bool = false
    ) -> [UInt8] {
        var head = "\(method) \(target) HTTP/1.1\r\nHost: \(host)\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        let framed = headers.contains { ["content-length", "transfer-encoding"].contains($0.0.lowercased()) }
        if !framed && (!body.isEmpty || method == "POST" || method == "PUT") { head += "Content-Length: \(body.count)\r\n" }
        head += keepAlive ? "\r\n" : "Connection: close\r\n\r\n"
        return Array(head.utf8) + body
    }

    /// `body` in chunked transfer coding, in pieces of `size` bytes.
    static func chunked(_ body: [UInt8], size: Int) -> [UInt8] {
        var out: [UInt8] = []
        var start = 0
        while start < body.count {
            let end = min(start + size, body.count)
            out += Array((String(end - start, radix: 16) + "\r\n").utf8) + body[start..<end] + Array("\r\n".utf8)
            start = end
        }
        return out + Array("0\r\n\r\n".utf8)
    }

    struct Malformed: Error, CustomStringConvertible {
        var description: String
    }

    /// The one response in `data`.
    static func parse(_ data: [UInt8]) throws -> Response {
        try parseAll(data, expecting: 1)[0]
    }

    /// The `count` responses, one after another, in `data` (each with a `Content-Length`
    /// except perhaps the last).
    static func parseAll(_ data: [UInt8], expecting count: Int) throws -> [Response] {
        var responses: [Response] = []
        var rest = data[...]
        while responses.count < count {
            let (response, used) = try parseOne(rest)
            responses.append(response)
            rest = rest.dropFirst(used)
        }
        guard rest.isEmpty else { throw Malformed(description: "\(rest.count) bytes after the last response") }
        return responses
    }

    private static func parseOne(_ data: ArraySlice<UInt8>) throws -> (Response, Int) {
        let separator: [UInt8] = [13, 10, 13, 10]
        guard let end = data.indices.first(where: { data[$0...].starts(with: separator) }) else {
            throw Malformed(description: "no end of the response head in \(data.count) bytes: \(String(decoding: data, as: UTF8.self))")
        }
        let lines = String(decoding: data[..<end], as: UTF8.self).components(separatedBy: "\r\n")
        let statusParts = lines[0].split(separator: " ", maxSplits: 2)
        guard statusParts.count >= 2, statusParts[0].hasPrefix("HTTP/1."), let status = Int(statusParts[1]) else {
            throw Malformed(description: "bad status line \(lines[0])")
        }
        var headers: [(name: String, value: String)] = []
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { throw Malformed(description: "bad header line \(line)") }
            headers.append((String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
        }
        var body = Array(data[(end + 4)...])
        if let length = headers.first(where: { $0.name.lowercased() == "content-length" }).flatMap({ Int($0.value) }) {
            guard body.count >= length else { throw Malformed(description: "body of \(body.count) bytes, Content-Length \(length)") }
            body = Array(body[0..<length])
        }
        return (Response(status: status, headers: headers, body: body), end + 4 - data.startIndex + body.count)
    }
}
