import CMicroHTTPD
import Dispatch
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// What libmicrohttpd's callbacks reach through their closure pointer: the handler, the limits,
/// the count of requests in flight and the messages logged while starting. The server holds one
/// reference to it for libmicrohttpd from start until the daemon has stopped, so it outlives
/// every callback.
final class ServerContext: Sendable {
    let handler: @Sendable (HTTPRequest) -> HTTPResponse
    let maxBodyBytes: Int
    /// Nanoseconds from a request's first line to the end of its body; 0 for no limit.
    let requestDeadline: UInt64
    private let inFlight = Atomic<Int>(0)
    private let messages = Mutex<[String]>([])

    init(handler: @escaping @Sendable (HTTPRequest) -> HTTPResponse, maxBodyBytes: Int, requestDeadline: Int = 0) {
        self.handler = handler
        self.maxBodyBytes = maxBodyBytes
        self.requestDeadline = UInt64(max(0, requestDeadline)) * 1_000_000_000
    }

    /// Requests whose first line has been read and whose completion has not been reported.
    var requestsInFlight: Int { inFlight.load(ordering: .acquiring) }

    /// Requests whose headers are not all in yet: their socket and when their first line was
    /// read. libmicrohttpd calls the access handler only once the headers are complete, so a
    /// client that sends them a byte at a time would hold its connection for as long as it
    /// likes; `sweep` shuts such a socket down once the request deadline has passed.
    private let awaitingHeaders = Mutex<[ObjectIdentifier: (socket: Int32, started: UInt64)]>([:])

    func awaitHeaders(_ request: RequestState, socket: Int32) {
        guard requestDeadline > 0, socket >= 0 else { return }
        awaitingHeaders.withLock { $0[ObjectIdentifier(request)] = (socket, request.started) }
    }

    /// The request's headers are in, or it ended: its socket is libmicrohttpd's alone again.
    /// Called before libmicrohttpd closes the socket (the completion is reported first), so a
    /// socket in the table is always the request's own.
    func headersIn(_ request: RequestState) {
        guard requestDeadline > 0 else { return }
        _ = awaitingHeaders.withLock { $0.removeValue(forKey: ObjectIdentifier(request)) }
    }

    /// Shuts down the sockets of requests whose headers are still not in past the deadline;
    /// libmicrohttpd then closes their connections. How many.
    @discardableResult
    func sweep(now: UInt64 = DispatchTime.now().uptimeNanoseconds) -> Int {
        awaitingHeaders.withLock { waiting in
            var cut = 0
            for (key, entry) in waiting where now &- entry.started > requestDeadline {
                shutdown(entry.socket, Int32(SHUT_RDWR))
                waiting[key] = nil
                cut += 1
            }
            return cut
        }
    }

    func requestBegan() { inFlight.add(1, ordering: .acquiringAndReleasing) }
    func requestEnded() { inFlight.subtract(1, ordering: .acquiringAndReleasing) }

    /// Keeps the last few messages libmicrohttpd logs (the reason it could not start, say).
    func log(_ message: String) {
        messages.withLock { messages in
            messages.append(message)
            if messages.count > 8 { messages.removeFirst() }
        }
    }

    /// The messages kept so far, forgetting them.
    func takeMessages() -> [String] {
        messages.withLock { messages in
            defer { messages = [] }
            return messages
        }
    }

    /// Bytes of an oversized body read and thrown away, past the limit, before the connection is
    /// closed instead of answered 413 (a client sending without end is not waited for).
    var discardAllowance: Int { max(maxBodyBytes, 1 << 20) }

    /// One call of the access handler for `request` on `connection` (see `accessHandler`).
    func access(
        _ connection: OpaquePointer, _ request: RequestState, method: UnsafePointer<CChar>?,
        upload: UnsafePointer<CChar>?, uploadSize: UnsafeMutablePointer<Int>
    ) -> MHD_Result {
        if request.answered {
            uploadSize.pointee = 0
            return .YES
        }
        // Headers and body must be in before the deadline (checked as the headers complete and
        // as each piece of the body arrives): past it, the connection is closed unanswered.
        if requestDeadline > 0, DispatchTime.now().uptimeNanoseconds - request.started > requestDeadline {
            return .NO
        }
        if !request.headersRead {
            // The first call: the headers are in, the body (if any) is still to come.
            request.headersRead = true
            headersIn(request)
            if let declared = MHD_lookup_connection_value(connection, .HEADER_KIND, "Content-Length") {
                let text = String(cString: declared).trimmingBlanks
                if let length = UInt64(text), length > UInt64(maxBodyBytes) {
                    return answer(connection, request, tooLarge(), closing: true)
                }
                if let length = Int(text) { request.body.reserveCapacity(min(length, maxBodyBytes)) }
            }
            return .YES
        }
        let size = uploadSize.pointee
        if size > 0 {
            // A piece of the body.
            request.received += size
            if !request.tooLarge && request.received > maxBodyBytes {
                request.tooLarge = true
                request.body = []
            }
            if request.tooLarge {
                if request.received - maxBodyBytes > discardAllowance { return .NO }
            } else if let upload {
                upload.withMemoryRebound(to: UInt8.self, capacity: size) {
                    request.body.append(contentsOf: UnsafeBufferPointer(start: $0, count: size))
                }
            }
            uploadSize.pointee = 0
            return .YES
        }
        // The last call: the request is complete.
        if request.tooLarge { return answer(connection, request, tooLarge(), closing: true) }
        let target = request.target
        let question = target.firstIndex(of: "?")
        let received = HTTPRequest(
            method: method.map { String(cString: $0) } ?? "",
            path: question.map { String(target[..<$0]) } ?? target,
            query: question.map { String(target[target.index(after: $0)...]) },
            headers: Self.headers(of: connection),
            body: request.body,
            remoteAddress: chttp_client_address(connection).map { ListenAddress.numericHost(of: $0) } ?? ""
        )
        request.body = []
        return answer(connection, request, handler(received), closing: false)
    }

    private func tooLarge() -> HTTPResponse {
        HTTPResponse(status: 413, text: "The request body is larger than the \(maxBodyBytes) bytes this server accepts.\n")
    }

    /// The request's header fields in the order received, names lower-cased.
    private static func headers(of connection: OpaquePointer) -> [(name: String, value: String)] {
        var headers: [(name: String, value: String)] = []
        withUnsafeMutablePointer(to: &headers) { list in
            _ = MHD_get_connection_values(
                connection, .HEADER_KIND,
                { list, _, name, value in
                    guard let list, let name else { return .YES }
                    list.assumingMemoryBound(to: [(name: String, value: String)].self).pointee.append(
                        (name: String(cString: name).lowercased(), value: value.map { String(cString: $0) } ?? ""))
                    return .YES
                }, list)
        }
        return headers
    }

    /// Queues `response` on the connection; `closing` asks the client to close the connection
    /// (the body was not read). A response libmicrohttpd cannot send is replaced with a 500.
    private func answer(_ connection: OpaquePointer, _ request: RequestState, _ response: HTTPResponse, closing: Bool) -> MHD_Result {
        request.answered = true
        var headers = response.headers.filter { $0.name.lowercased() != "content-length" }
        if closing { headers.append(("Connection", "close")) }
        var problem: String?
        if !(200...999).contains(response.status) { problem = "the handler answered with status \(response.status)" }
        if problem == nil, let made = Self.make(HTTPResponse(status: response.status, headers: headers, body: response.body)) {
            defer { MHD_destroy_response(made) }
            return MHD_queue_response(connection, UInt32(response.status), made)
        }
        problem = problem ?? "the handler answered with a header the server cannot send"
        guard let made = Self.make(HTTPResponse(status: 500, text: "Internal server error: \(problem!).\n")) else { return .NO }
        defer { MHD_destroy_response(made) }
        return MHD_queue_response(connection, 500, made)
    }

    /// A libmicrohttpd response holding a copy of the body and the header fields; nil if a field
    /// is refused (a line break in it, say).
    private static func make(_ response: HTTPResponse) -> OpaquePointer? {
        let made = response.body.withUnsafeBytes { body in
            MHD_create_response_from_buffer(body.count, UnsafeMutableRawPointer(mutating: body.baseAddress), .RESPMEM_MUST_COPY)
        }
        guard let made else { return nil }
        for (name, value) in response.headers where MHD_add_response_header(made, name, value) != .YES {
            MHD_destroy_response(made)
            return nil
        }
        return made
    }
}

/// One request's state across the access handler's calls: made when its first line is read
/// (`requestStarted`), released when libmicrohttpd reports it completed (`requestCompleted`).
/// libmicrohttpd calls back for one connection on one thread at a time, so it needs no lock.
final class RequestState {
    /// The request target as sent: path, then `?` and the query if any.
    let target: String
    var headersRead = false
    var answered = false
    var tooLarge = false
    var received = 0
    var body: [UInt8] = []
    /// When its first line was read (a monotonic clock, in nanoseconds).
    let started = DispatchTime.now().uptimeNanoseconds

    init(target: String) { self.target = target }
}

/// libmicrohttpd's access handler: called once when the headers are in, once for every piece of
/// the body, and once more when the request is complete (no upload data), each time with the
/// request's state that `requestStarted` made.
let accessHandler: MHD_AccessHandlerCallback = { cls, connection, _, method, _, upload, uploadSize, requestPointer in
    guard let cls, let connection, let uploadSize, let state = requestPointer?.pointee else { return .NO }
    let context = Unmanaged<ServerContext>.fromOpaque(cls).takeUnretainedValue()
    let request = Unmanaged<RequestState>.fromOpaque(state).takeUnretainedValue()
    return context.access(connection, request, method: method, upload: upload, uploadSize: uploadSize)
}

/// Called with the raw request target as soon as a request's first line is read; the state it
/// returns (retained here) is the request's pointer in every later callback.
let requestStarted: @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>?, OpaquePointer?) -> UnsafeMutableRawPointer? = {
    cls, target, connection in
    guard let cls else { return nil }
    let context = Unmanaged<ServerContext>.fromOpaque(cls).takeUnretainedValue()
    context.requestBegan()
    let state = RequestState(target: target.map { String(cString: $0) } ?? "")
    if let connection { context.awaitHeaders(state, socket: chttp_connection_fd(connection)) }
    return Unmanaged.passRetained(state).toOpaque()
}

/// Called once for every request `requestStarted` saw, answered or not: releases its state.
let requestCompleted: MHD_RequestCompletedCallback = { cls, _, requestPointer, _ in
    guard let cls, let requestPointer, let state = requestPointer.pointee else { return }
    requestPointer.pointee = nil
    let context = Unmanaged<ServerContext>.fromOpaque(cls).takeUnretainedValue()
    context.headersIn(Unmanaged<RequestState>.fromOpaque(state).takeUnretainedValue())
    Unmanaged<RequestState>.fromOpaque(state).release()
    context.requestEnded()
}

/// libmicrohttpd's error messages, kept by the context for the error thrown when it cannot start.
let logMessage: MHD_LogCallback = { cls, format, arguments in
    guard let cls, let format else { return }
    let text = withUnsafeTemporaryAllocation(of: CChar.self, capacity: 512) { buffer in
        guard let arguments else { return String(cString: format) }
        _ = vsnprintf(buffer.baseAddress, buffer.count, format, arguments)
        return String(cString: buffer.baseAddress!)
    }
    Unmanaged<ServerContext>.fromOpaque(cls).takeUnretainedValue().log(text.trimmingBlanks)
}

extension String {
    /// The string without leading and trailing spaces, tabs and line breaks.
    var trimmingBlanks: String {
        let blanks: Set<Character> = [" ", "\t", "\r", "\n"]
        var slice = Substring(self)
        while let first = slice.first, blanks.contains(first) { slice = slice.dropFirst() }
        while let last = slice.last, blanks.contains(last) { slice = slice.dropLast() }
        return String(slice)
    }
}
