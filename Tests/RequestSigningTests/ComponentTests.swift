import Testing

@testable import RequestSigning

/// Component values, header normalization, Content-Digest, and the base64 and structured-field
/// pieces underneath.
@Suite struct ComponentTests {
    static let request = SignedRequestParts(
        method: "POST",
        target: "/path?param=value&foo=bar&baz=bat%2Dman",
        headers: [("Host", "www.example.com")]
    )

    static func value(_ name: String, _ request: SignedRequestParts = request) throws -> String {
        try RequestSignature.componentValue(name, of: request)
    }

    @Test func derivedComponents() throws {
        #expect(try Self.value("@method") == "POST")
        #expect(try Self.value("@target-uri") == "https://www.example.com/path?param=value&foo=bar&baz=bat%2Dman")
        #expect(try Self.value("@authority") == "www.example.com")
        #expect(try Self.value("@scheme") == "https")
        #expect(try Self.value("@request-target") == "/path?param=value&foo=bar&baz=bat%2Dman")
        #expect(try Self.value("@path") == "/path")
        #expect(try Self.value("@query") == "?param=value&foo=bar&baz=bat%2Dman")
    }

    @Test func aTargetWithoutQueryHasALoneQuestionMark() throws {
        let request = SignedRequestParts(method: "GET", target: "/path", authority: "Example.COM:8443")
        #expect(try Self.value("@query", request) == "?")
        #expect(try Self.value("@path", request) == "/path")
        #expect(try Self.value("@authority", request) == "example.com:8443")
        let empty = SignedRequestParts(method: "GET", target: "?a=b", authority: "example.com")
        #expect(try Self.value("@path", empty) == "/")
        #expect(try Self.value("@query", empty) == "?a=b")
    }

    @Test func theAuthorityComesFromTheHostHeaderWhenNotGiven() throws {
        let none = SignedRequestParts(method: "GET", target: "/")
        let error = #expect(throws: RequestSignatureError.self) { try Self.value("@authority", none) }
        #expect(error?.reason == .missingHeader)
        let given = SignedRequestParts(method: "GET", target: "/", authority: "a.example", headers: [("Host", "b.example")])
        #expect(try Self.value("@authority", given) == "a.example")
    }

    @Test func headerValuesAreTrimmedAndJoined() throws {
        let request = SignedRequestParts(
            method: "GET",
            target: "/",
            headers: [
                ("X-OWS-Header", "   Leading and trailing whitespace.   "),
                ("Cache-Control", "max-age=60"),
                ("cache-control", "   must-revalidate"),
                ("X-Empty-Header", ""),
                ("X-Tabs", "\t a \t"),
            ]
        )
        #expect(try Self.value("x-ows-header", request) == "Leading and trailing whitespace.")
        #expect(try Self.value("cache-control", request) == "max-age=60, must-revalidate")
        #expect(try Self.value("x-empty-header", request) == "")
        #expect(try Self.value("x-tabs", request) == "a")
        #expect(request.headers.map(\.name) == ["x-ows-header", "cache-control", "cache-control", "x-empty-header", "x-tabs"])
        #expect(request.field("CACHE-CONTROL") == "max-age=60, must-revalidate")
        #expect(request.field("absent") == nil)
    }

    @Test func contentDigestRefusals() {
        let body = Array("body".utf8)
        let header = ContentDigest.header(for: body)
        #expect(ContentDigest.matches(header, body: body))
        #expect(!ContentDigest.matches(header, body: Array("bodz".utf8)))
        #expect(!ContentDigest.matches(header, body: []))
        #expect(!ContentDigest.matches("", body: body))
        #expect(!ContentDigest.matches("sha-512=:AAAA:", body: body))
        #expect(!ContentDigest.matches("sha-256=AAAA", body: body))
        #expect(!ContentDigest.matches("sha-256=:AAAA", body: body))
        #expect(!ContentDigest.matches(header + ", " + header, body: body))
        #expect(!ContentDigest.matches("SHA-256=" + header.dropFirst("sha-256=".count), body: body))
        // The empty body's digest is the SHA-256 of nothing.
        #expect(ContentDigest.header(for: []) == "sha-256=:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=:")
    }

    @Test func base64MatchesTheKnownEncodings() {
        let cases = ["": "", "f": "Zg==", "fo": "Zm8=", "foo": "Zm9v", "foob": "Zm9vYg==", "fooba": "Zm9vYmE=", "foobar": "Zm9vYmFy"]
        for (plain, encoded) in cases {
            #expect(Base64.encode(Array(plain.utf8)) == encoded)
            #expect(Base64.decode(encoded) == Array(plain.utf8))
        }
        for length in 0..<70 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            #expect(Base64.decode(Base64.encode(bytes)) == bytes)
        }
        for bad in ["Zg", "Zg=", "Zh==", "Zm9=", "Z===", "====", "Zm9v=", "Zm 9", "Zm9v\n"] {
            #expect(Base64.decode(bad) == nil, "\(bad)")
        }
    }

    @Test func structuredFieldsParseAndSerializeCanonically() throws {
        let text = #"a=("x" "y\"z";p=?0);q=1.500;r=-7, b, c=tok/en:1;s=:AQID:, d=?0"#
        let dictionary = try StructuredFieldParser.dictionary(text, field: "Test")
        #expect(dictionary.map(\.key) == ["a", "b", "c", "d"])
        guard case .innerList(let list) = dictionary[0].member else {
            Issue.record("a is not an inner list")
            return
        }
        #expect(list.items.map(\.value) == [.string("x"), .string(#"y"z"#)])
        #expect(list.items[1].parameters.value(of: "p") == .boolean(false))
        #expect(list.parameters.value(of: "q") == .decimal("1.5"))
        #expect(list.parameters.value(of: "r") == .integer(-7))
        #expect(StructuredFieldSerializer.innerList(list) == #"("x" "y\"z";p=?0);q=1.5;r=-7"#)
        guard case .item(let b) = dictionary[1].member, case .item(let c) = dictionary[2].member else {
            Issue.record("b or c is not an item")
            return
        }
        #expect(b.value == .boolean(true))
        #expect(c.value == .token("tok/en:1"))
        #expect(c.parameters.value(of: "s") == .bytes([1, 2, 3]))
        #expect(StructuredFieldSerializer.item(c) == "tok/en:1;s=:AQID:")
        // Spaces and tabs around members are allowed; inside an inner list, several spaces are.
        let spaced = try StructuredFieldParser.dictionary("  a=(  \"x\"   \"y\"  ) ,\tb=1  ", field: "Test")
        guard case .innerList(let spacedList) = spaced[0].member else {
            Issue.record("a is not an inner list")
            return
        }
        #expect(StructuredFieldSerializer.innerList(spacedList) == #"("x" "y")"#)
    }
}
