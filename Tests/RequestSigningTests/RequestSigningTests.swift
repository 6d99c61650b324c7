import Sodium
import Testing

@testable import RequestSigning

/// Self-consistency tests: signing then verifying, tampering refused with the right reason, and
/// malformed headers refused without a crash. None of these values come from a standard.
@Suite struct RequestSigningTests {
    static let phone = SigningKey(seed: [UInt8](repeating: 7, count: 32))!
    static let laptop = SigningKey(seed: [UInt8](repeating: 9, count: 32))!

    static func keys(_ keyID: String) -> [UInt8]? {
        switch keyID {
        case "phone": phone.publicKey
        case "laptop": laptop.publicKey
        default: nil
        }
    }

    static let request = SignedRequestParts(
        method: "POST",
        target: "/ledgers/abc/events?after=12",
        authority: "sync.example.org",
        headers: [("Content-Type", "application/octet-stream"), ("Ledger", "abc")],
        body: Array("some events".utf8)
    )

    static func signed(
        _ request: SignedRequestParts = request,
        components: [String] = RequestSignature.defaultComponents,
        key: SigningKey = phone,
        keyID: String = "phone",
        label: String = "sig1"
    ) throws -> SignedRequestParts {
        let added = try RequestSignature.sign(
            request, components: components, key: key, keyID: keyID, created: 1_700_000_000, nonce: "n-0001", label: label)
        return request.adding(added)
    }

    /// The reason `verify` refuses `request` for, or nil when it accepts it.
    static func refusal(
        _ request: SignedRequestParts, label: String? = nil, required: [String] = RequestSignature.defaultComponents
    ) -> RequestSignatureError.Reason? {
        do {
            _ = try RequestSignature.verify(request, label: label, required: required, publicKey: keys)
            return nil
        } catch {
            return error.reason
        }
    }

    /// `request` with every value of the header `name` replaced by `value` (or removed when nil).
    static func replacing(_ name: String, with value: String?, in request: SignedRequestParts) -> SignedRequestParts {
        var copy = request
        copy.headers.removeAll { $0.name == name }
        if let value { copy.headers.append((name: name, value: value)) }
        return copy
    }

    // MARK: Round trips

    @Test func signThenVerify() throws {
        let signed = try Self.signed()
        let verified = try RequestSignature.verify(signed, publicKey: Self.keys)
        #expect(verified.label == "sig1")
        #expect(verified.keyID == "phone")
        #expect(verified.created == 1_700_000_000)
        #expect(verified.expires == nil)
        #expect(verified.nonce == "n-0001")
        #expect(verified.components == RequestSignature.defaultComponents)
    }

    @Test func signAddsTheDigestThenTheSignatureHeaders() throws {
        let added = try RequestSignature.sign(
            Self.request, key: Self.phone, keyID: "phone", created: 1_700_000_000, nonce: "n-0001")
        #expect(added.map(\.name) == ["content-digest", "signature-input", "signature"])
        #expect(added[0].value == ContentDigest.header(for: Self.request.body))
        #expect(added[1].value == #"sig1=("@method" "@path" "content-digest" "ledger");created=1700000000;keyid="phone";alg="ed25519";nonce="n-0001""#)
        #expect(added[2].value.hasPrefix("sig1=:") && added[2].value.hasSuffix(":"))
    }

    @Test func theBaseIsTheCoveredLinesThenTheParameters() throws {
        let signed = try Self.signed()
        let located = try RequestSignature.locate(signed, label: nil)
        let base = try RequestSignature.signatureBase(
            signed, covering: located.components, signatureParams: StructuredFieldSerializer.innerList(located.list))
        #expect(
            base == """
                "@method": POST
                "@path": /ledgers/abc/events
                "content-digest": \(ContentDigest.header(for: Self.request.body))
                "ledger": abc
                "@signature-params": ("@method" "@path" "content-digest" "ledger");created=1700000000;keyid="phone";alg="ed25519";nonce="n-0001"
                """)
    }

    @Test func aPresentDigestIsKeptWhenItMatchesAndRefusedWhenNot() throws {
        let withDigest = Self.request.adding([("Content-Digest", ContentDigest.header(for: Self.request.body))])
        let added = try RequestSignature.sign(withDigest, key: Self.phone, keyID: "phone", created: 1, nonce: "n")
        #expect(added.map(\.name) == ["signature-input", "signature"])
        #expect(Self.refusal(withDigest.adding(added)) == nil)

        let wrong = Self.request.adding([("Content-Digest", ContentDigest.header(for: []))])
        let error = #expect(throws: RequestSignatureError.self) {
            try RequestSignature.sign(wrong, key: Self.phone, keyID: "phone", created: 1, nonce: "n")
        }
        #expect(error?.reason == .digestMismatch)
    }

    @Test func anEmptyBodySignsAndVerifies() throws {
        var request = Self.request
        request.body = []
        request.method = "GET"
        #expect(Self.refusal(try Self.signed(request)) == nil)
    }

    @Test func everyDerivedComponentSignsAndVerifies() throws {
        let all = ["@method", "@target-uri", "@authority", "@scheme", "@request-target", "@path", "@query", "content-type", "ledger"]
        let signed = try Self.signed(components: all)
        #expect(Self.refusal(signed, required: all) == nil)
        // Changing the query is seen only through the components that include it.
        var otherQuery = signed
        otherQuery.target = "/ledgers/abc/events?after=13"
        #expect(Self.refusal(otherQuery, required: all) == .badSignature)
    }

    @Test func keyIDsAndNoncesWithQuotesAndBackslashesRoundTrip() throws {
        let request = Self.request
        let added = try RequestSignature.sign(
            request, key: Self.phone, keyID: #"my "phone" \ 2"#, created: 5, nonce: #"\""#)
        #expect(added[1].value.contains(#"keyid="my \"phone\" \\ 2""#))
        let verified = try RequestSignature.verify(request.adding(added)) { id in id == #"my "phone" \ 2"# ? Self.phone.publicKey : nil }
        #expect(verified.keyID == #"my "phone" \ 2"#)
        #expect(verified.nonce == #"\""#)
    }

    @Test func theLabelChoosesAmongSeveralSignatures() throws {
        let once = try Self.signed(label: "device")
        let twice = once.adding(
            try RequestSignature.sign(once, key: Self.laptop, keyID: "laptop", created: 2, nonce: "other", label: "proxy"))
        #expect(Self.refusal(twice) == .signatureNotFound)
        #expect(try RequestSignature.verify(twice, label: "device", publicKey: Self.keys).keyID == "phone")
        #expect(try RequestSignature.verify(twice, label: "proxy", publicKey: Self.keys).keyID == "laptop")
        #expect(Self.refusal(twice, label: "absent") == .signatureNotFound)
    }

    @Test func expiresIsReturnedWhenPresent() throws {
        let parameters: SFParameters = [
            ("created", .integer(10)), ("expires", .integer(70)), ("keyid", .string("phone")), ("nonce", .string("n")),
        ]
        let added = try RequestSignature.sign(
            Self.request, components: RequestSignature.defaultComponents, parameters: parameters, key: Self.phone, label: "sig1")
        #expect(try RequestSignature.verify(Self.request.adding(added), publicKey: Self.keys).expires == 70)
    }

    // MARK: Tampering

    @Test func anAlteredBodyIsADigestMismatch() throws {
        var signed = try Self.signed()
        signed.body = Array("other events".utf8)
        #expect(Self.refusal(signed) == .digestMismatch)
    }

    @Test func anAlteredDigestIsABadSignature() throws {
        var signed = try Self.signed()
        signed.body = Array("other events".utf8)
        signed = Self.replacing("content-digest", with: ContentDigest.header(for: signed.body), in: signed)
        #expect(Self.refusal(signed) == .badSignature)
    }

    @Test func anAlteredMethodPathOrLedgerIsABadSignature() throws {
        let signed = try Self.signed()
        var method = signed
        method.method = "PUT"
        #expect(Self.refusal(method) == .badSignature)
        var path = signed
        path.target = "/ledgers/xyz/events?after=12"
        #expect(Self.refusal(path) == .badSignature)
        #expect(Self.refusal(Self.replacing("ledger", with: "xyz", in: signed)) == .badSignature)
        // A second ledger header changes the covered value too.
        #expect(Self.refusal(signed.adding([("Ledger", "xyz")])) == .badSignature)
    }

    @Test func theQueryIsNotCoveredByThePath() throws {
        var signed = try Self.signed()
        signed.target = "/ledgers/abc/events?after=0"
        #expect(Self.refusal(signed) == nil)
    }

    @Test func aMissingCoveredHeaderIsNamed() throws {
        let signed = Self.replacing("ledger", with: nil, in: try Self.signed())
        let error = #expect(throws: RequestSignatureError.self) {
            try RequestSignature.verify(signed, publicKey: Self.keys)
        }
        #expect(error?.reason == .missingHeader)
        #expect(error?.message.contains("ledger") == true)
    }

    @Test func aRequiredComponentNotCoveredIsRefused() throws {
        let signed = try Self.signed(components: ["@method", "@path", "content-digest"])
        let error = #expect(throws: RequestSignatureError.self) {
            try RequestSignature.verify(signed, publicKey: Self.keys)
        }
        #expect(error?.reason == .componentNotCovered)
        #expect(error?.message.contains(#""ledger""#) == true)
        #expect(Self.refusal(signed, required: ["@method", "@path", "content-digest"]) == nil)
    }

    @Test func anUnknownKeyIDIsRefused() throws {
        #expect(Self.refusal(try Self.signed(keyID: "tablet")) == .unknownKey)
        let failing = #expect(throws: RequestSignatureError.self) {
            try RequestSignature.verify(try Self.signed()) { _ in throw LookupFailure() }
        }
        #expect(failing?.reason == .unknownKey)
        #expect(failing?.message.contains("lookup broke") == true)
        let short = #expect(throws: RequestSignatureError.self) {
            try RequestSignature.verify(try Self.signed()) { _ in [1, 2, 3] }
        }
        #expect(short?.reason == .unknownKey)
    }

    struct LookupFailure: Error, CustomStringConvertible {
        var description: String { "lookup broke" }
    }

    @Test func anotherKeysSignatureIsRefused() throws {
        #expect(Self.refusal(try Self.signed(key: Self.laptop, keyID: "phone")) == .badSignature)
    }

    @Test func anAlteredSignatureInputIsABadSignature() throws {
        let signed = try Self.signed()
        let input = try #require(signed.field("signature-input"))
        for (from, to) in [("1700000000", "1700000001"), (#""n-0001""#, #""n-0002""#), (#""ledger")"#, #""ledger" "@query")"#)] {
            let altered = input.replacing(from, with: to)
            #expect(altered != input)
            #expect(Self.refusal(Self.replacing("signature-input", with: altered, in: signed)) == .badSignature, "\(altered)")
        }
        // Claiming another device's key id with this device's signature.
        let claimed = input.replacing(#"keyid="phone""#, with: #"keyid="laptop""#)
        #expect(Self.refusal(Self.replacing("signature-input", with: claimed, in: signed)) == .badSignature)
    }

    @Test func aFlippedSignatureBitIsABadSignature() throws {
        let signed = try Self.signed()
        let value = try #require(signed.field("signature"))
        let bytes = try #require(Base64.decode(String(value.dropFirst("sig1=:".count).dropLast())))
        for index in [0, 31, 63] {
            var flipped = bytes
            flipped[index] ^= 0x01
            let header = "sig1=:" + Base64.encode(flipped) + ":"
            #expect(Self.refusal(Self.replacing("signature", with: header, in: signed)) == .badSignature)
        }
        let short = "sig1=:" + Base64.encode(Array(bytes.dropLast())) + ":"
        #expect(Self.refusal(Self.replacing("signature", with: short, in: signed)) == .badSignature)
    }

    @Test func anotherAlgorithmIsRefused() throws {
        for alg in [BareItem.string("hmac-sha256"), .string("ED25519"), .token("ed25519"), .integer(1)] {
            let parameters: SFParameters = [("created", .integer(1)), ("keyid", .string("phone")), ("alg", alg), ("nonce", .string("n"))]
            let added = try RequestSignature.sign(
                Self.request, components: RequestSignature.defaultComponents, parameters: parameters, key: Self.phone, label: "sig1")
            #expect(Self.refusal(Self.request.adding(added)) == .unsupportedAlgorithm, "\(alg)")
        }
    }

    @Test func missingOrMistypedParametersAreRefused() throws {
        let full: SFParameters = [("created", .integer(1)), ("keyid", .string("phone")), ("nonce", .string("n"))]
        for dropped in ["created", "keyid", "nonce"] {
            let parameters = full.filter { $0.key != dropped }
            let added = try RequestSignature.sign(
                Self.request, components: RequestSignature.defaultComponents, parameters: parameters, key: Self.phone, label: "sig1")
            let error = #expect(throws: RequestSignatureError.self) {
                try RequestSignature.verify(Self.request.adding(added), publicKey: Self.keys)
            }
            #expect(error?.reason == .missingParameter)
            #expect(error?.message.contains(dropped) == true)
        }
        for (key, value) in [("created", BareItem.string("1")), ("keyid", .token("phone")), ("nonce", .integer(5)), ("expires", .decimal("1.5"))] {
            var parameters = full.filter { $0.key != key }
            parameters.append((key, value))
            let added = try RequestSignature.sign(
                Self.request, components: RequestSignature.defaultComponents, parameters: parameters, key: Self.phone, label: "sig1")
            #expect(Self.refusal(Self.request.adding(added)) == .malformedField, "\(key)")
        }
    }

    @Test func missingSignatureHeadersAreNamed() throws {
        let signed = try Self.signed()
        #expect(Self.refusal(Self.request) == .missingHeader)
        #expect(Self.refusal(Self.replacing("signature", with: nil, in: signed)) == .missingHeader)
        #expect(Self.refusal(Self.replacing("signature-input", with: nil, in: signed)) == .missingHeader)
        #expect(Self.refusal(Self.replacing("signature-input", with: "", in: signed)) == .signatureNotFound)
        let other = Self.replacing("signature", with: "sig2=:" + Base64.encode([UInt8](repeating: 0, count: 64)) + ":", in: signed)
        #expect(Self.refusal(other) == .signatureNotFound)
    }

    @Test func unsupportedAndInvalidComponentsAreRefused() throws {
        for components in [["@method", "@status"], ["@signature-params"], ["@query-param"], ["Ledger"], ["led ger"], [""]] {
            let error = #expect(throws: RequestSignatureError.self) {
                try RequestSignature.sign(Self.request, components: components, key: Self.phone, keyID: "phone", created: 1, nonce: "n")
            }
            #expect(error?.reason == .unsupportedComponent, "\(components)")
        }
        let twice = #expect(throws: RequestSignatureError.self) {
            try RequestSignature.sign(Self.request, components: ["ledger", "ledger"], key: Self.phone, keyID: "phone", created: 1, nonce: "n")
        }
        #expect(twice?.reason == .malformedField)

        let signed = try Self.signed()
        let input = try #require(signed.field("signature-input"))
        let cases: [(String, RequestSignatureError.Reason)] = [
            (input.replacing(#""ledger")"#, with: #""ledger";sf)"#), .unsupportedComponent),
            (input.replacing(#""ledger")"#, with: #""ledger";key="a")"#), .unsupportedComponent),
            (input.replacing(#""ledger")"#, with: #""@status")"#), .unsupportedComponent),
            (input.replacing(#""ledger")"#, with: #""LEDGER")"#), .unsupportedComponent),
            (input.replacing(#""ledger")"#, with: #""ledger" "ledger")"#), .malformedField),
            (input.replacing(#""ledger")"#, with: #"ledger)"#), .malformedField),
            (input.replacing(#""ledger")"#, with: #""ledger" 5)"#), .malformedField),
        ]
        for (altered, reason) in cases {
            #expect(Self.refusal(Self.replacing("signature-input", with: altered, in: signed)) == reason, "\(altered)")
        }
    }

    @Test func valuesThatWouldAddLinesToTheBaseAreRefused() throws {
        let injected = Self.replacing("ledger", with: "abc\n\"@method\": GET", in: Self.request)
        let error = #expect(throws: RequestSignatureError.self) {
            try RequestSignature.sign(injected, key: Self.phone, keyID: "phone", created: 1, nonce: "n")
        }
        #expect(error?.reason == .malformedField)
        var method = Self.request
        method.method = "POST\r"
        #expect(throws: RequestSignatureError.self) {
            try RequestSignature.sign(method, key: Self.phone, keyID: "phone", created: 1, nonce: "n")
        }
    }

    @Test func valuesAStructuredFieldCannotHoldAreRefusedWhenSigning() {
        let attempts: [() throws -> Void] = [
            { _ = try RequestSignature.sign(Self.request, key: Self.phone, keyID: "téléphone", created: 1, nonce: "n") },
            { _ = try RequestSignature.sign(Self.request, key: Self.phone, keyID: "phone", created: 1, nonce: "line\nbreak") },
            { _ = try RequestSignature.sign(Self.request, key: Self.phone, keyID: "phone", created: 1, nonce: "n", label: "Sig1") },
            { _ = try RequestSignature.sign(Self.request, key: Self.phone, keyID: "phone", created: 1, nonce: "n", label: "") },
            { _ = try RequestSignature.sign(Self.request, key: Self.phone, keyID: "phone", created: Int64.max, nonce: "n") },
            { _ = try RequestSignature.sign(Self.request, key: Self.phone, keyID: "phone", created: Int64.min, nonce: "n") },
        ]
        for attempt in attempts {
            let error = #expect(throws: RequestSignatureError.self) { try attempt() }
            #expect(error?.reason == .malformedField)
        }
    }

    // MARK: Malformed headers

    static let validSignature = "sig1=:" + Base64.encode([UInt8](repeating: 0, count: 64)) + ":"
    static let validInput = #"sig1=("@method" "@path" "content-digest" "ledger");created=1;keyid="phone";alg="ed25519";nonce="n""#

    /// Signature-Input values that must be refused as malformed, with what is wrong with each.
    static let malformedInputs: [(String, String)] = [
        (#"sig1=("@method" "@path""#, "an inner list without its ')'"),
        (#"sig1=("@method);created=1"#, "an unterminated string"),
        (#"sig1=("@method");created=1;keyid="phone"#, "an unterminated string parameter"),
        (#"sig1=("@method");keyid="a\x""#, "an escape other than \\\" and \\\\"),
        (#"sig1=("@method");keyid="a\"#, "an escape at the end"),
        ("sig1=(\"@method\");keyid=\"caf\u{E9}\"", "non-ASCII in a string"),
        ("sig1=(\"@method\");keyid=\"a\tb\"", "a tab in a string"),
        (#"sig1=("@method")created=1"#, "a parameter without ';'"),
        (#"sig1=("@method"),"#, "a trailing comma"),
        (#"sig1=("@method"),  "#, "a trailing comma and spaces"),
        (#"Sig1=("@method")"#, "an upper-case key"),
        (#"1sig=("@method")"#, "a key starting with a digit"),
        (#"sig1=("@method");created=1234567890123456"#, "an integer of 16 digits"),
        (#"sig1=("@method");created=1.2345"#, "a decimal of 4 fractional digits"),
        (#"sig1=("@method");created=1."#, "a decimal without fractional digits"),
        (#"sig1=("@method");created=1234567890123.5"#, "a decimal of 13 integer digits"),
        (#"sig1=("@method");created=-"#, "a lone minus"),
        (#"sig1=("@method");created=?2"#, "a boolean that is not 0 or 1"),
        (#"sig1=("@method");created="#, "a parameter without its value"),
        (#"sig1=("@method");created=:AAAA"#, "an unterminated byte sequence"),
        (#"sig1=("@method");=1"#, "a parameter without its key"),
        (#"sig1=("@method"), sig1=("@path")"#, "a label twice"),
        (#"sig1=("@method";a;a)"#, "a parameter twice"),
        (#"sig1=("@method");created=1;created=2"#, "a signature parameter twice"),
        (#"sig1=("@method""@path")"#, "items without a space between them"),
        (#"sig1=(@method)"#, "an unquoted derived component"),
        (#"sig1=("@method") x"#, "text after a member"),
        (#"sig1"#, "a bare key (true), not an inner list"),
        (#"sig1="@method""#, "a string, not an inner list"),
        (#"sig1=(("@method"))"#, "a nested inner list"),
        (#",sig1=("@method")"#, "a leading comma"),
        ("sig1=(\"@method\")\u{0};created=1", "a NUL byte"),
        ("sig1=(" + String(repeating: "\"a\" ", count: 5000) + ")", "a field far too long"),
        (String(repeating: "s", count: 1_000_000), "a megabyte key"),
        ((0..<65).map { "s\($0)=()" }.joined(separator: ","), "more members than accepted"),
        ("sig1=(" + (0..<65).map { "\"h\($0)\"" }.joined(separator: " ") + ")", "more items than accepted"),
        ("sig1=()" + (0..<33).map { ";p\($0)" }.joined(), "more parameters than accepted"),
    ]

    /// Signature values that must be refused as malformed.
    static let malformedSignatures: [(String, String)] = [
        ("sig1=:not base64!:", "characters outside base64"),
        ("sig1=:AAA:", "base64 whose length is not a multiple of four"),
        ("sig1=:QR==:", "base64 whose padding bits are not zero"),
        ("sig1=:QUI=QUI=:", "padding before the end"),
        ("sig1=:=AAA:", "padding at the start"),
        ("sig1=:A=A=:", "padding between characters"),
        ("sig1=:AAAA", "an unterminated byte sequence"),
        (#"sig1="AAAA""#, "a string, not a byte sequence"),
        ("sig1=(:AAAA:)", "an inner list, not a byte sequence"),
        ("sig1", "a boolean, not a byte sequence"),
        ("sig1=:" + String(repeating: "A", count: 100_000) + ":", "a field far too long"),
        ("sig1=:AAAA:;", "a ';' without a parameter"),
    ]

    @Test(arguments: malformedInputs)
    func malformedSignatureInputsAreRefused(input: String, what: String) throws {
        let request = Self.request.adding([("Signature-Input", input), ("Signature", Self.validSignature)])
        let error = #expect(throws: RequestSignatureError.self, "\(what)") {
            try RequestSignature.verify(request, publicKey: Self.keys)
        }
        #expect(error?.reason == .malformedField, "\(what): \(error?.message ?? "")")
        #expect(error?.message.contains("Signature-Input") == true, "\(what): \(error?.message ?? "")")
    }

    @Test(arguments: malformedSignatures)
    func malformedSignaturesAreRefused(signature: String, what: String) throws {
        let request = Self.request.adding([("Signature-Input", Self.validInput), ("Signature", signature)])
        let error = #expect(throws: RequestSignatureError.self, "\(what)") {
            try RequestSignature.verify(request, publicKey: Self.keys)
        }
        #expect(error?.reason == .malformedField, "\(what): \(error?.message ?? "")")
        #expect(error?.message.contains("Signature") == true, "\(what): \(error?.message ?? "")")
    }

    @Test func errorMessagesSayWhatAndWhere() throws {
        let request = Self.request.adding([("Signature-Input", #"sig1=("@method);created=1"#), ("Signature", Self.validSignature)])
        let error = #expect(throws: RequestSignatureError.self) {
            try RequestSignature.verify(request, publicKey: Self.keys)
        }
        #expect(error?.description == #"Signature-Input is malformed: a string without its closing '"' at offset 6"#)
    }

    /// Every proper prefix of a valid Signature-Input or Signature is refused, and nothing traps.
    @Test func everyTruncationIsRefused() throws {
        let signed = try Self.signed()
        for name in ["signature-input", "signature"] {
            let value = try #require(signed.field(name))
            for length in 0..<value.utf8.count {
                let truncated = String(decoding: value.utf8.prefix(length), as: UTF8.self)
                #expect(Self.refusal(Self.replacing(name, with: truncated, in: signed)) != nil, "\(name): \(truncated)")
            }
        }
    }

    /// Random bytes and random single-byte changes of valid headers never trap, and a changed
    /// header never verifies.
    @Test func randomInputsNeverTrap() throws {
        var random = SplitMix64(seed: 0x5EED)
        let signed = try Self.signed()
        let alphabet = Array(#"sig1=():;"\ ,-*?.@abcAZ09+/"#.utf8) + [0, 9, 0x7F, 0xC3, 0xA9]
        for _ in 0..<2000 {
            let length = Int(random.next() % 80)
            let bytes = (0..<length).map { _ in alphabet[Int(random.next() % UInt64(alphabet.count))] }
            let text = String(decoding: bytes, as: UTF8.self)
            _ = Self.refusal(Self.replacing("signature-input", with: text, in: signed))
            _ = Self.refusal(Self.replacing("signature", with: text, in: signed))
            _ = ContentDigest.matches(text, body: [])
        }
        for name in ["signature-input", "signature"] {
            let value = Array(try #require(signed.field(name)).utf8)
            for _ in 0..<500 {
                var mutated = value
                let index = Int(random.next() % UInt64(mutated.count))
                let replacement = alphabet[Int(random.next() % UInt64(alphabet.count))]
                guard replacement != mutated[index] else { continue }
                mutated[index] = replacement
                let text = String(decoding: mutated, as: UTF8.self)
                // A change of case in a base64 letter or similar must not slip through.
                #expect(Self.refusal(Self.replacing(name, with: text, in: signed)) != nil, "\(name): \(text)")
            }
        }
    }
}

/// A small deterministic generator, so the random tests repeat exactly.
struct SplitMix64 {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
