/// The parts of an HTTP request a signature can cover: its method, target, authority, header
/// fields and body.
public struct SignedRequestParts: Sendable {
    /// The method as sent, such as `POST`; it is covered as written, without changing its case.
    public var method: String
    /// The request target as sent, in origin form: the path and, after a `?`, the query, such as
    /// `/foo?param=Value&Pet=dog`.
    public var target: String
    /// The scheme the request was sent with, `https` unless told; used only by `@scheme` and
    /// `@target-uri`.
    public var scheme: String
    /// The host (and port, if not the default) the request was sent to; when nil, the `host`
    /// header stands in for it.
    public var authority: String?
    /// The header fields in the order sent. Names are lower-cased by the initializer and looked up
    /// without regard to case; a name may appear more than once.
    public var headers: [(name: String, value: String)]
    /// The body's bytes, empty when there is none.
    public var body: [UInt8]

    /// A request's parts; header names are lower-cased.
    public init(
        method: String,
        target: String,
        scheme: String = "https",
        authority: String? = nil,
        headers: [(name: String, value: String)] = [],
        body: [UInt8] = []
    ) {
        self.method = method
        self.target = target
        self.scheme = scheme
        self.authority = authority
        self.headers = headers.map { (name: $0.name.lowercased(), value: $0.value) }
        self.body = body
    }

    /// Every value of the header `name` (in any case), in the order sent.
    public func values(of name: String) -> [String] {
        let wanted = name.lowercased()
        return headers.filter { $0.name.lowercased() == wanted }.map(\.value)
    }

    /// The header `name`'s value as a signature covers it: each of its values without leading or
    /// trailing spaces and tabs, joined by `", "`; nil when the request has no such header.
    public func field(_ name: String) -> String? {
        let values = values(of: name)
        guard !values.isEmpty else { return nil }
        return values.map(Self.trimmed).joined(separator: ", ")
    }

    /// A copy with `more` appended to the headers (names lower-cased), such as the headers
    /// `RequestSignature.sign` returns.
    public func adding(_ more: [(name: String, value: String)]) -> SignedRequestParts {
        var copy = self
        copy.headers += more.map { (name: $0.name.lowercased(), value: $0.value) }
        return copy
    }

    /// The path: the target up to its `?`, or `/` when that is empty.
    var path: String {
        let path = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
        return path.isEmpty ? "/" : path
    }

    /// The query with its leading `?`, or a lone `?` when the target has none.
    var query: String {
        guard let mark = target.firstIndex(of: "?") else { return "?" }
        return String(target[mark...])
    }

    static func trimmed(_ value: String) -> String {
        let scalars = value.unicodeScalars
        let isSpace: (Unicode.Scalar) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = scalars.firstIndex(where: { !isSpace($0) }), let last = scalars.lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        return String(scalars[first...last])
    }
}
