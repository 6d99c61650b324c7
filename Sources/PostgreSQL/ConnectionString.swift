import CLibPQ
import Foundation

/// A connection string (a `postgresql://` URL or `key=value` pairs) as libpq reads it, with
/// what the ledger adds before connecting and how messages may name it.
///
/// - Reading it is libpq's own parser, without connecting: a string libpq cannot read is refused
///   with libpq's reason, less the text it quotes (libpq repeats the offending part, which may be
///   the password).
/// - Its secrets (every value libpq treats as a password, and whatever the string spells as one
///   in the URL's user part or a `password=` parameter, raw and percent-decoded) never reach a
///   message: `redacted` leaves them out of the name, and a libpq message that contains one is
///   withheld.
/// - A server that is neither a Unix socket nor loopback (`localhost`, 127.0.0.0/8, `::1`) is
///   reached with TLS and a verified certificate (`sslmode=verify-full`), unless the string sets
///   `sslmode` itself.
public struct ConnectionString: Sendable {
    /// The string as given.
    public let text: String
    /// libpq's reading of it: the options it sets (no defaults, no environment).
    public let settings: [String: String]
    /// Every value to keep out of messages (non-empty), longest first.
    let secrets: [String]

    /// Reads `text` with libpq's parser; a string it cannot read is refused with libpq's reason,
    /// its quoted parts withheld.
    public init(_ text: String) throws(PostgreSQLError) {
        self.text = text
        // Neither a URL nor `key=value` pairs: libpq takes it as a database name.
        guard Self.uriScheme(text) != nil || text.contains("=") else {
            settings = ["dbname": text]
            secrets = []
            return
        }
        var errorMessage: UnsafeMutablePointer<CChar>?
        guard let options = PQconninfoParse(text, &errorMessage) else {
            let reason = errorMessage.map { Self.withoutQuotedText(Connection.trimmed($0)) } ?? "out of memory"
            if let errorMessage { PQfreemem(errorMessage) }
            throw PostgreSQLError(message: "malformed connection string: \(reason)", isConnectionFailure: true)
        }
        defer { PQconninfoFree(options) }
        var settings: [String: String] = [:]
        var secrets = Set(Self.spelledSecrets(text))
        var option = options
        while let keyword = option.pointee.keyword {
            if let value = option.pointee.val {
                let v = String(cString: value)
                settings[String(cString: keyword)] = v
                // libpq marks a password field "*" (hidden in a connect dialog).
                if let display = option.pointee.dispchar, String(cString: display) == "*" { secrets.insert(v) }
            }
            option += 1
        }
        self.settings = settings
        self.secrets = secrets.filter { !$0.isEmpty }.sorted { ($0.count, $0) > ($1.count, $1) }
    }

    // MARK: Connecting

    /// The keywords and values the ledger passes to `PQconnectdbParams` (with `expand_dbname`):
    /// a connect timeout of `connectTimeout` seconds unless the string or `PGCONNECT_TIMEOUT`
    /// sets one, `sslmode=verify-full` when `requiresTLS`, the application name, then the
    /// string itself (as `dbname`, expanded: what it sets wins over what comes before it).
    public func parameters(connectTimeout: Int = 10, environment: [String: String]) -> [(keyword: String, value: String)] {
        var list: [(keyword: String, value: String)] = []
        if environment["PGCONNECT_TIMEOUT"] == nil { list.append(("connect_timeout", String(connectTimeout))) }
        if requiresTLS(environment: environment) { list.append(("sslmode", "verify-full")) }
        list.append(("fallback_application_name", "ledger"))
        list.append(("dbname", text))
        return list
    }

    /// Whether the connection must use TLS with a verified certificate: the string does not set
    /// `sslmode`, and some server it names (or the environment's `PGHOST`/`PGHOSTADDR` name, when
    /// it names none) is neither a Unix socket nor a loopback address. A string naming a service
    /// (`service=`, `PGSERVICE`) without a host is treated as remote: its host is not known here.
    public func requiresTLS(environment: [String: String]) -> Bool {
        guard settings["sslmode"] == nil else { return false }
        func nonEmpty(_ s: String?) -> String? { s.flatMap { $0.isEmpty ? nil : $0 } }
        let host = nonEmpty(settings["host"]) ?? nonEmpty(environment["PGHOST"])
        let hostaddr = nonEmpty(settings["hostaddr"]) ?? nonEmpty(environment["PGHOSTADDR"])
        if host == nil && hostaddr == nil {
            return settings["service"] != nil || nonEmpty(environment["PGSERVICE"]) != nil
        }
        let hosts = host.map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) } ?? []
        let addresses = hostaddr.map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) } ?? []
        for i in 0..<max(hosts.count, addresses.count) {
            // libpq connects to the numeric address when there is one, else to the host.
            let address = i < addresses.count && !addresses[i].isEmpty ? addresses[i] : (i < hosts.count ? hosts[i] : "")
            if !Self.isLocal(address) { return true }
        }
        return false
    }

    /// Whether `host` (a libpq host or address) is a Unix socket directory, an abstract socket,
    /// the default socket (empty), `localhost`, or a loopback address (127.0.0.0/8, `::1`).
    public static func isLocal(_ host: String) -> Bool {
        let h = host.trimmingCharacters(in: .whitespaces)
        if h.isEmpty || h.hasPrefix("/") || h.hasPrefix("@") || h.lowercased() == "localhost" { return true }
        let bare = h.hasPrefix("[") && h.hasSuffix("]") ? String(h.dropFirst().dropLast()) : h
        var v4 = in_addr()
        if inet_pton(AF_INET, bare, &v4) == 1 {
            return UInt32(bigEndian: v4.s_addr) >> 24 == 127
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, bare, &v6) == 1 {
            let bytes = withUnsafeBytes(of: &v6) { Array($0) }
            if bytes == [UInt8](repeating: 0, count: 15) + [1] { return true }
            // An IPv4 address mapped into IPv6 (::ffff:127.x.y.z).
            return bytes.prefix(12) == ArraySlice([UInt8](repeating: 0, count: 10) + [0xFF, 0xFF]) && bytes[12] == 127
        }
        return false
    }

    // MARK: Messages

    /// `message` as is, or, when it contains one of the string's secrets, a sentence saying why
    /// libpq's reason is not shown.
    public func withholdingSecrets(_ message: String) -> String {
        guard secrets.contains(where: { message.contains($0) }) else { return message }
        return "libpq's reason is not shown, as it repeats the password"
    }

    /// Keywords whose values are secrets (compared without regard to case).
    static let secretKeywords: Set<String> = ["password", "sslpassword"]

    /// `text` for messages: the password of a URL's user part and the value of every parameter
    /// whose name, percent-decoded, is `password` or `sslpassword` replaced by `…`; in
    /// `key=value` form, the value of every such key. Works on strings libpq cannot read too.
    public static func redacted(_ text: String) -> String {
        if let scheme = uriScheme(text) {
            let rest = text[scheme.upperBound...]
            let (password, query) = uriParts(rest)
            let mark = query.map { rest.index(before: $0.lowerBound) } ?? rest.endIndex
            var out = String(text[..<scheme.upperBound])
            if let password {
                out += rest[..<password.lowerBound] + "…" + rest[password.upperBound..<mark]
            } else {
                out += rest[..<mark]
            }
            if let query {
                out += "?" + rest[query].split(separator: "&", omittingEmptySubsequences: false).map { p -> String in
                    guard let eq = p.firstIndex(of: "="), secretKeywords.contains(percentDecoded(p[..<eq]).lowercased()) else { return String(p) }
                    return String(p[...eq]) + "…"
                }.joined(separator: "&")
            }
            return out
        }
        var out = ""
        var i = text.startIndex
        for pair in keyValuePairs(text) {
            out += text[i..<pair.value.lowerBound]
            out += secretKeywords.contains(pair.keyword.lowercased()) ? "…" : String(text[pair.value])
            i = pair.value.upperBound
        }
        return out + text[i...]
    }

    /// The secrets `text` spells, whether or not libpq can read it: a URL's user-part password
    /// and password parameters, raw and percent-decoded; in `key=value` form, password values.
    static func spelledSecrets(_ text: String) -> [String] {
        var found: [String] = []
        if let scheme = uriScheme(text) {
            let rest = text[scheme.upperBound...]
            let (password, query) = uriParts(rest)
            if let password {
                let raw = rest[password]
                found += [String(raw), percentDecoded(raw)]
                // A raw `/`, `?` or `@` in it makes libpq read the URL otherwise, and quote a piece.
                found += raw.split(whereSeparator: { "/?@:".contains($0) }).map { percentDecoded($0) }
            }
            if let query {
                for p in rest[query].split(separator: "&") {
                    guard let eq = p.firstIndex(of: "="), secretKeywords.contains(percentDecoded(p[..<eq]).lowercased()) else { continue }
                    let value = p[p.index(after: eq)...]
                    found += [String(value), percentDecoded(value)]
                }
            }
        } else {
            for pair in keyValuePairs(text) where secretKeywords.contains(pair.keyword.lowercased()) {
                let raw = String(text[pair.value])
                found.append(raw)
                // A quoted value as libpq reads it: without its quotes, `\'` and `\\` unescaped.
                if raw.hasPrefix("'") {
                    var value = ""
                    var escaped = false
                    for c in raw.dropFirst() {
                        if escaped {
                            value.append(c)
                            escaped = false
                        } else if c == "\\" {
                            escaped = true
                        } else if c == "'" {
                            break
                        } else {
                            value.append(c)
                        }
                    }
                    found.append(value)
                }
            }
        }
        return found
    }

    /// In a URL after its scheme: the password of its user part, and its query (after `?`).
    /// The password is read widely, as the union of libpq's reading (the user part ends at the
    /// first `@` unless a `/` comes first) and of the last `@` before the query (a password
    /// holding a raw `/`, which libpq reads as a host and port instead, and may quote).
    static func uriParts(_ rest: Substring) -> (password: Range<String.Index>?, query: Range<String.Index>?) {
        var ranges: [Range<String.Index>] = []
        if let stop = rest.firstIndex(where: { $0 == "@" || $0 == "/" }), rest[stop] == "@",
            let colon = rest[..<stop].firstIndex(of: ":")
        {
            ranges.append(rest.index(after: colon)..<stop)
        }
        let head = rest[..<(rest.firstIndex(of: "?") ?? rest.endIndex)]
        if let at = head.lastIndex(of: "@"), let colon = head[..<at].firstIndex(of: ":") {
            ranges.append(head.index(after: colon)..<at)
        }
        let password = ranges.first.map { first in
            ranges.reduce(first) { min($0.lowerBound, $1.lowerBound)..<max($0.upperBound, $1.upperBound) }
        }
        let after = password?.upperBound ?? rest.startIndex
        let query = rest[after...].firstIndex(of: "?").map { rest.index(after: $0)..<rest.endIndex }
        return (password, query)
    }

    /// The range of `postgresql://` or `postgres://` at the start of `text`, if it is a URL.
    static func uriScheme(_ text: String) -> Range<String.Index>? {
        for scheme in ["postgresql://", "postgres://"] {
            if let r = text.range(of: scheme, options: [.anchored, .caseInsensitive]) { return r }
        }
        return nil
    }

    /// The keywords of a `key=value` string and the ranges of their values (a value quoted with
    /// `'…'` includes its quotes; an unterminated one runs to the end).
    static func keyValuePairs(_ text: String) -> [(keyword: String, value: Range<String.Index>)] {
        var pairs: [(keyword: String, value: Range<String.Index>)] = []
        var i = text.startIndex
        func skipSpaces() { while i < text.endIndex, text[i].isWhitespace { i = text.index(after: i) } }
        while true {
            skipSpaces()
            guard i < text.endIndex else { break }
            let keyStart = i
            while i < text.endIndex, text[i] != "=", !text[i].isWhitespace { i = text.index(after: i) }
            let keyword = String(text[keyStart..<i])
            skipSpaces()
            guard i < text.endIndex, text[i] == "=" else { continue }
            i = text.index(after: i)
            skipSpaces()
            let valueStart = i
            if i < text.endIndex, text[i] == "'" {
                i = text.index(after: i)
                while i < text.endIndex, text[i] != "'" {
                    if text[i] == "\\" { i = text.index(after: i) }
                    if i < text.endIndex { i = text.index(after: i) }
                }
                if i < text.endIndex { i = text.index(after: i) }
            } else {
                while i < text.endIndex, !text[i].isWhitespace {
                    if text[i] == "\\" { i = text.index(after: i) }
                    if i < text.endIndex { i = text.index(after: i) }
                }
            }
            pairs.append((keyword, valueStart..<i))
        }
        return pairs
    }

    /// `%XX` sequences decoded; a malformed one, and bytes that are not UTF-8, kept as they are.
    static func percentDecoded(_ s: Substring) -> String {
        var bytes: [UInt8] = []
        var utf8 = Array(s.utf8)[...]
        while let b = utf8.popFirst() {
            if b == UInt8(ascii: "%"), utf8.count >= 2, let hi = hexValue(utf8[utf8.startIndex]),
                let lo = hexValue(utf8[utf8.startIndex + 1])
            {
                bytes.append(hi << 4 | lo)
                utf8 = utf8.dropFirst(2)
            } else {
                bytes.append(b)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// `message` with every `"…"` it quotes replaced by `"…"` (libpq quotes the text it could not
    /// read, which may hold the password).
    static func withoutQuotedText(_ message: String) -> String {
        var out = ""
        var inQuote = false
        for c in message {
            if c == "\"" {
                out += inQuote ? "…\"" : "\""
                inQuote.toggle()
            } else if !inQuote {
                out.append(c)
            }
        }
        if inQuote { out += "…" }
        return out
    }
}
