import Foundation

/// One HTTP request as the server received it, body complete, handed to the server's handler.
public struct HTTPRequest: Sendable {
    /// The method as the client sent it (`GET`, `POST`, …), case unchanged.
    public var method: String
    /// The request target up to, not including, the first `?`, as the client sent it:
    /// percent-encoding is left as it is (so `%2F` stays distinct from `/`).
    public var path: String
    /// What follows the first `?` of the request target, undecoded; nil when there is no `?`.
    public var query: String?
    /// The header fields in the order received, names lower-cased, values as received
    /// (leading and trailing blanks removed). A field sent twice appears twice.
    public var headers: [(name: String, value: String)]
    /// The body, complete (a chunked body is de-chunked); empty when there is none.
    public var body: [UInt8]
    /// The client's IP address, numeric (`127.0.0.1`, `::1`), without the port.
    public var remoteAddress: String

    /// A request made by hand (for tests of a handler without a server).
    public init(
        method: String, path: String, query: String? = nil, headers: [(name: String, value: String)] = [],
        body: [UInt8] = [], remoteAddress: String = "127.0.0.1"
    ) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers.map { (name: $0.name.lowercased(), value: $0.value) }
        self.body = body
        self.remoteAddress = remoteAddress
    }

    /// The value of the first header field called `name` (compared without regard to case), or nil.
    public func header(_ name: String) -> String? {
        let wanted = name.lowercased()
        return headers.first { $0.name == wanted }?.value
    }
}

/// The answer a handler gives to one request.
///
/// The server sends `Content-Length` from `body` itself: a `Content-Length` in `headers` is
/// ignored. A header whose name or value the server cannot send (a line break in it, say) makes
/// the server answer 500 instead, and so does a status outside 100…999.
public struct HTTPResponse: Sendable {
    /// The status code (200, 404, …).
    public var status: Int
    /// The header fields to send, in this order, names as given.
    public var headers: [(name: String, value: String)]
    /// The body; sent whole, with its length as `Content-Length`.
    public var body: [UInt8]

    /// A response with the given status, header fields and body.
    public init(status: Int = 200, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A plain-text response: `text` in UTF-8, `Content-Type: text/plain; charset=utf-8`.
    public init(status: Int = 200, text: String, headers: [(name: String, value: String)] = []) {
        self.init(status: status, headers: [("Content-Type", "text/plain; charset=utf-8")] + headers, body: Array(text.utf8))
    }

    /// A JSON response whose body is `json`, already encoded; `Content-Type: application/json`.
    public init(status: Int = 200, json: [UInt8], headers: [(name: String, value: String)] = []) {
        self.init(status: status, headers: [("Content-Type", "application/json")] + headers, body: json)
    }

    /// A JSON response whose body is `value` encoded by `encoder`; `Content-Type: application/json`.
    /// Throws what the encoder throws.
    public init<Value: Encodable>(
        status: Int = 200, encoding value: Value, encoder: JSONEncoder = JSONEncoder(), headers: [(name: String, value: String)] = []
    ) throws {
        self.init(status: status, json: Array(try encoder.encode(value)), headers: headers)
    }

    /// A response carrying `bytes` as they are, with the given `Content-Type`
    /// (`application/octet-stream` unless told otherwise).
    public init(
        status: Int = 200, bytes: [UInt8], contentType: String = "application/octet-stream", headers: [(name: String, value: String)] = []
    ) {
        self.init(status: status, headers: [("Content-Type", contentType)] + headers, body: bytes)
    }
}
