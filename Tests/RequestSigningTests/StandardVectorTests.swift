import Sodium
import Testing

@testable import RequestSigning

/// The published examples of HTTP Message Signatures and of Content-Digest, reproduced byte for
/// byte. Every constant in this file is copied from the standards' own examples.
@Suite struct StandardVectorTests {
    /// The `test-key-ed25519` private key as PKCS#8 DER (base64 of the PEM body).
    static let privateKeyDER = "MC4CAQAwBQYDK2VwBCIEIJ+DYvh6SEqVTm50DFtMDoQikTmiCqirVv9mWG9qfSnF"
    /// The same key's public half as SubjectPublicKeyInfo DER (base64 of the PEM body).
    static let publicKeyDER = "MCowBQYDK2VwAyEAJrQLj5P/89iXES9+vFgrIy29clF9CC/oPPsw3c5D0bs="
    /// The JWK form's `d` (the seed) and `x` (the public key), base64url without padding.
    static let jwkD = "n4Ni-HpISpVObnQMW0wOhCKROaIKqKtW_2ZYb2p9KcU"
    static let jwkX = "JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs"

    static let body = Array(#"{"hello": "world"}"#.utf8)

    /// The example request every signature example starts from (before any signature headers).
    static let request = SignedRequestParts(
        method: "POST",
        target: "/foo?param=Value&Pet=dog",
        headers: [
            ("Host", "example.com"),
            ("Date", "Tue, 20 Apr 2021 02:07:55 GMT"),
            ("Content-Type", "application/json"),
            ("Content-Digest", "sha-512=:WZDPaVn/7XgHaAy8pmojAkGWoRx2UFChF41A2svX+TaPm+AbwAgBWnrIiYllu7BNNyealdVLvRwEmTHWXvJwew==:"),
            ("Content-Length", "18"),
        ],
        body: body
    )

    static let covered = ["date", "@method", "@path", "@authority", "content-type", "content-length"]

    static let expectedBase = """
        "date": Tue, 20 Apr 2021 02:07:55 GMT
        "@method": POST
        "@path": /foo
        "@authority": example.com
        "content-type": application/json
        "content-length": 18
        "@signature-params": ("date" "@method" "@path" "@authority" "content-type" "content-length");created=1618884473;keyid="test-key-ed25519"
        """

    static let expectedSignatureInput =
        #"sig-b26=("date" "@method" "@path" "@authority" "content-type" "content-length");created=1618884473;keyid="test-key-ed25519""#
    static let expectedSignature =
        "sig-b26=:wqcAqbmYJ2ji2glfAMaRy4gruYYnx2nEFN2HN6jrnDnQCK1u02Gb04v9EDgwUPiu4A0w6vuQv5lIp5WPpBKRCw==:"

    static func base64URL(_ text: String) -> [UInt8] {
        var standard = String(text.map { $0 == "-" ? "+" : $0 == "_" ? "/" : $0 })
        while standard.utf8.count % 4 != 0 { standard += "=" }
        return Base64.decode(standard)!
    }

    static var seed: [UInt8] { base64URL(jwkD) }
    static var publicKey: [UInt8] { base64URL(jwkX) }

    @Test func theKeyFormsAgreeAndTheSeedGivesThePublishedPublicKey() throws {
        let privateDER = try #require(Base64.decode(Self.privateKeyDER))
        let publicDER = try #require(Base64.decode(Self.publicKeyDER))
        #expect(Array(privateDER.suffix(32)) == Self.seed)
        #expect(Array(publicDER.suffix(32)) == Self.publicKey)
        let key = try #require(SigningKey(seed: Self.seed))
        #expect(key.publicKey == Self.publicKey)
        #expect(Array(key.secretBytes.prefix(32)) == Self.seed)
        #expect(SigningKey(secretBytes: key.secretBytes) == key)
    }

    @Test func aSeedOfTheWrongSizeIsNoKey() {
        #expect(SigningKey(seed: []) == nil)
        #expect(SigningKey(seed: [UInt8](repeating: 1, count: 31)) == nil)
        #expect(SigningKey(seed: [UInt8](repeating: 1, count: 33)) == nil)
        #expect(SigningKey(seed: [UInt8](repeating: 1, count: 64)) == nil)
    }

    @Test func theEd25519ExampleSignatureBaseIsReproduced() throws {
        let parameters: SFParameters = [("created", .integer(1_618_884_473)), ("keyid", .string("test-key-ed25519"))]
        let list = SFInnerList(items: Self.covered.map { SFItem(value: .string($0)) }, parameters: parameters)
        let base = try RequestSignature.signatureBase(
            Self.request, covering: Self.covered, signatureParams: StructuredFieldSerializer.innerList(list))
        #expect(base == Self.expectedBase)
    }

    @Test func theEd25519ExampleSignatureIsReproducedExactly() throws {
        let key = try #require(SigningKey(seed: Self.seed))
        let parameters: SFParameters = [("created", .integer(1_618_884_473)), ("keyid", .string("test-key-ed25519"))]
        let added = try RequestSignature.sign(
            Self.request, components: Self.covered, parameters: parameters, key: key, label: "sig-b26")
        #expect(added.map(\.name) == ["signature-input", "signature"])
        #expect(added[0].value == Self.expectedSignatureInput)
        #expect(added[1].value == Self.expectedSignature)
    }

    @Test func theEd25519ExampleParsesBackToItsBaseAndVerifies() throws {
        let signed = Self.request.adding([("Signature-Input", Self.expectedSignatureInput), ("Signature", Self.expectedSignature)])
        let located = try RequestSignature.locate(signed, label: nil)
        #expect(located.label == "sig-b26")
        #expect(located.components == Self.covered)
        let base = try RequestSignature.signatureBase(
            signed, covering: located.components, signatureParams: StructuredFieldSerializer.innerList(located.list))
        #expect(base == Self.expectedBase)
        #expect(Ed25519.verify(signature: located.signature, message: Array(base.utf8), publicKey: Self.publicKey))
    }

    /// The example carries no nonce, which this service's verification requires; everything
    /// before that check (parsing, the algorithm, created and keyid) passes.
    @Test func theEd25519ExampleLacksTheNonceThisServiceRequires() throws {
        let signed = Self.request.adding([("Signature-Input", Self.expectedSignatureInput), ("Signature", Self.expectedSignature)])
        let error = #expect(throws: RequestSignatureError.self) {
            try RequestSignature.verify(signed, required: Self.covered) { _ in Self.publicKey }
        }
        #expect(error?.reason == .missingParameter)
        #expect(error?.message.contains("nonce") == true)
    }

    @Test func theContentDigestExampleIsReproduced() {
        #expect(ContentDigest.header(for: Self.body) == "sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:")
        #expect(ContentDigest.matches("sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:", body: Self.body))
        // Both digests of the example body, as a field with two algorithms: the sha-256 one is checked.
        #expect(
            ContentDigest.matches(
                "sha-512=:WZDPaVn/7XgHaAy8pmojAkGWoRx2UFChF41A2svX+TaPm+AbwAgBWnrIiYllu7BNNyealdVLvRwEmTHWXvJwew==:, sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:",
                body: Self.body))
    }
}
