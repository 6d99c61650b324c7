import Sodium

/// The `Content-Digest` field with the `sha-256` algorithm: a dictionary from algorithm names to
/// the digest of the body as a byte sequence, such as `sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:`.
public enum ContentDigest {
    /// The algorithm this module computes and checks.
    public static let algorithm = "sha-256"

    /// The field's value for `body`: `sha-256=:` then the base64 of the body's SHA-256, then `:`.
    public static func header(for body: [UInt8]) -> String {
        "\(algorithm)=:" + Base64.encode(sha256(body)) + ":"
    }

    /// Whether `header`, a Content-Digest value, holds a `sha-256` digest equal to `body`'s.
    /// Digests under other algorithms are ignored; a value that does not parse, or has no `sha-256`
    /// digest, does not match.
    public static func matches(_ header: String, body: [UInt8]) -> Bool {
        (try? check(header, body: body)) != nil
    }

    /// Throws, naming what is wrong, unless `header` holds a `sha-256` digest equal to `body`'s.
    static func check(_ header: String, body: [UInt8]) throws(RequestSignatureError) {
        let dictionary: SFDictionary
        do {
            dictionary = try StructuredFieldParser.dictionary(header, field: "Content-Digest")
        } catch {
            throw RequestSignatureError(.malformedField, error.message)
        }
        guard let member = dictionary.member(algorithm) else {
            let present = dictionary.map(\.key).joined(separator: ", ")
            throw RequestSignatureError(
                .digestMismatch,
                "Content-Digest has no \(algorithm) digest" + (present.isEmpty ? "" : " (it has \(present))")
            )
        }
        guard case .item(let item) = member, case .bytes(let digest) = item.value else {
            throw RequestSignatureError(.malformedField, "Content-Digest's \(algorithm) member is not a byte sequence")
        }
        guard digest == sha256(body) else {
            throw RequestSignatureError(.digestMismatch, "Content-Digest's \(algorithm) digest does not match the body's \(body.count) bytes")
        }
    }

    private static func sha256(_ body: [UInt8]) -> [UInt8] {
        var hasher = Sodium.SHA256Hash()
        body.withUnsafeBytes { hasher.update($0) }
        return hasher.finalize()
    }
}
