import Sodium

/// Why a request's signature was refused (or could not be made), with a message naming what is
/// wrong.
public struct RequestSignatureError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The kind of failure, for a caller deciding how to answer.
    public enum Reason: Sendable, Equatable, CaseIterable {
        /// The request lacks `Signature-Input` or `Signature`, or a header field the signature covers.
        case missingHeader
        /// `Signature-Input`, `Signature` or `Content-Digest` does not parse as the structured
        /// field it must be, is too large, or holds a value of the wrong type; or a value to sign
        /// cannot be written in one.
        case malformedField
        /// No signature under the label asked for, or several signatures and no label to choose one.
        case signatureNotFound
        /// The signature's parameters lack `created`, `keyid` or `nonce`.
        case missingParameter
        /// The signature's `alg` parameter names an algorithm other than `ed25519`.
        case unsupportedAlgorithm
        /// A covered component this module cannot compute, or a name that is not a component.
        case unsupportedComponent
        /// A component the caller requires is not among those the signature covers.
        case componentNotCovered
        /// `Content-Digest` does not hold the body's SHA-256 digest.
        case digestMismatch
        /// The key lookup knows no key by the signature's `keyid`, or failed.
        case unknownKey
        /// The signature does not verify with the key.
        case badSignature
    }

    /// The kind of failure.
    public let reason: Reason
    /// What is wrong, in words.
    public let message: String

    /// A failure of kind `reason` described by `message`.
    public init(_ reason: Reason, _ message: String) {
        self.reason = reason
        self.message = message
    }

    /// The message.
    public var description: String { message }
}

/// HTTP Message Signatures with the `ed25519` algorithm: signing a request's chosen components
/// with a device's key, and verifying such a signature.
///
/// The signed bytes (the signature base) are one line per covered component, `"name": value`,
/// in the order covered, then the line `"@signature-params": ` followed by the covered list and
/// its parameters exactly as the `Signature-Input` field carries them. Lines end with a single
/// newline, and the last has none. The `Signature` field carries the 64-byte Ed25519 signature of
/// those bytes under the same label.
///
/// Derived components are `@method`, `@target-uri`, `@authority`, `@scheme`, `@request-target`,
/// `@path` and `@query`; any other covered name is a header field, given lower-case. Component
/// parameters (such as `;sf` or `;req`) are not supported.
///
/// Checking that `created` is recent and that the `nonce` was not seen before is the caller's:
/// `verify` returns both.
public enum RequestSignature {
    /// The one signature algorithm, as the `alg` parameter names it.
    public static let algorithm = "ed25519"

    /// What a device's request to the sync service covers: method, path, body digest and ledger id.
    public static let defaultComponents = ["@method", "@path", "content-digest", "ledger"]

    /// The derived components this module computes.
    public static let derivedComponents: Set<String> = [
        "@method", "@target-uri", "@authority", "@scheme", "@request-target", "@path", "@query",
    ]

    /// The largest integer a structured field can hold.
    static let maxInteger: Int64 = 999_999_999_999_999

    /// A signature verified: who signed, when, with which nonce, and what it covers.
    public struct Verified: Sendable, Equatable {
        /// The label the signature was found under.
        public let label: String
        /// The `keyid` parameter: the name the key was looked up by.
        public let keyID: String
        /// The `created` parameter: when the signer says it signed, in seconds since 1970.
        public let created: Int64
        /// The `expires` parameter, when the signer set one.
        public let expires: Int64?
        /// The `nonce` parameter, for the caller's replay check.
        public let nonce: String
        /// The covered components in the order signed.
        public let components: [String]
    }

    /// The headers that sign `request`: `content-digest` first when the body's digest is covered
    /// and the request has none, then `signature-input` and `signature` under `label`. The
    /// parameters are `created`, `keyid`, `alg="ed25519"` and `nonce`, in that order.
    ///
    /// Throws when a covered header is absent, a component is not supported, a present
    /// `Content-Digest` does not match the body, or a value cannot be written as a structured field.
    public static func sign(
        _ request: SignedRequestParts,
        components: [String] = defaultComponents,
        key: SigningKey,
        keyID: String,
        created: Int64,
        nonce: String,
        label: String = "sig1"
    ) throws(RequestSignatureError) -> [(name: String, value: String)] {
        for (name, value) in [("keyid", keyID), ("nonce", nonce)] where !StructuredFieldSerializer.isValidString(value) {
            throw RequestSignatureError(.malformedField, "the \(name) \(value.debugDescription) has a character other than printable ASCII, which a structured string cannot hold")
        }
        let parameters: SFParameters = [
            ("created", .integer(created)), ("keyid", .string(keyID)), ("alg", .string(algorithm)), ("nonce", .string(nonce)),
        ]
        return try sign(request, components: components, parameters: parameters, key: key, label: label)
    }

    /// Signs with any parameters, in the order given; `sign` above fixes them.
    static func sign(
        _ request: SignedRequestParts,
        components: [String],
        parameters: SFParameters,
        key: SigningKey,
        label: String
    ) throws(RequestSignatureError) -> [(name: String, value: String)] {
        guard StructuredFieldSerializer.isValidKey(label) else {
            throw RequestSignatureError(.malformedField, "the label \(label.debugDescription) is not a structured field key (a lower-case letter or '*', then lower-case letters, digits, '_', '-', '.' or '*')")
        }
        for (name, value) in parameters {
            if case .integer(let number) = value, number > maxInteger || number < -maxInteger {
                throw RequestSignatureError(.malformedField, "the \(name) \(number) is larger than a structured field integer (15 digits)")
            }
        }
        try validate(components)
        var request = request
        var added: [(name: String, value: String)] = []
        if components.contains("content-digest") {
            if let present = request.field("content-digest") {
                try ContentDigest.check(present, body: request.body)
            } else {
                let digest = (name: "content-digest", value: ContentDigest.header(for: request.body))
                request.headers.append(digest)
                added.append(digest)
            }
        }
        let list = SFInnerList(items: components.map { SFItem(value: .string($0)) }, parameters: parameters)
        let signatureParams = StructuredFieldSerializer.innerList(list)
        let base = try signatureBase(request, covering: components, signatureParams: signatureParams)
        let signature = key.sign(Array(base.utf8))
        added.append((name: "signature-input", value: label + "=" + signatureParams))
        added.append((name: "signature", value: label + "=:" + Base64.encode(signature) + ":"))
        return added
    }

    /// Verifies `request`'s signature under `label` (or its only signature when nil): the
    /// algorithm, if named, is `ed25519`; every component in `required` is covered; `created`,
    /// `keyid` and `nonce` are present; the Ed25519 signature verifies with the key `publicKey`
    /// returns for the `keyid`; and, when `content-digest` is covered, it matches the body.
    ///
    /// `publicKey` returns the 32-byte public key known by a keyid, or nil when none is; an error
    /// it throws is reported as `unknownKey`. Freshness of `created` and replay of `nonce` are
    /// left to the caller.
    public static func verify(
        _ request: SignedRequestParts,
        label: String? = nil,
        required: [String] = defaultComponents,
        publicKey: (String) throws -> [UInt8]?
    ) throws(RequestSignatureError) -> Verified {
        let located = try locate(request, label: label)
        let (chosen, list, signature, components) = (located.label, located.list, located.signature, located.components)

        let parameters = list.parameters
        if let alg = parameters.value(of: "alg") {
            guard case .string(let name) = alg, name == algorithm else {
                throw RequestSignatureError(.unsupportedAlgorithm, "the signature's alg is \(StructuredFieldSerializer.bareItem(alg)); only \"\(algorithm)\" is accepted")
            }
        }
        let created = try integer("created", in: parameters, required: true)!
        let expires = try integer("expires", in: parameters, required: false)
        let keyID = try string("keyid", in: parameters)
        let nonce = try string("nonce", in: parameters)

        let uncovered = required.filter { !components.contains($0) }
        guard uncovered.isEmpty else {
            throw RequestSignatureError(
                .componentNotCovered,
                "the signature does not cover " + uncovered.map(\.debugDescription).joined(separator: ", ") + ", which must be covered"
            )
        }

        let base = try signatureBase(request, covering: components, signatureParams: StructuredFieldSerializer.innerList(list))

        let key: [UInt8]?
        do {
            key = try publicKey(keyID)
        } catch {
            throw RequestSignatureError(.unknownKey, "looking up the key \(keyID.debugDescription) failed: \(error)")
        }
        guard let key else {
            throw RequestSignatureError(.unknownKey, "no key is known by the keyid \(keyID.debugDescription)")
        }
        guard key.count == SigningKey.publicKeyBytes else {
            throw RequestSignatureError(.unknownKey, "the key known by \(keyID.debugDescription) is \(key.count) bytes; an Ed25519 public key is \(SigningKey.publicKeyBytes)")
        }
        guard signature.count == SigningKey.signatureBytes else {
            throw RequestSignatureError(.badSignature, "the signature labelled \(chosen.debugDescription) is \(signature.count) bytes; an Ed25519 signature is \(SigningKey.signatureBytes)")
        }
        guard Ed25519.verify(signature: signature, message: Array(base.utf8), publicKey: key) else {
            throw RequestSignatureError(.badSignature, "the signature labelled \(chosen.debugDescription) does not verify with the key of \(keyID.debugDescription)")
        }
        if components.contains("content-digest"), let digest = request.field("content-digest") {
            try ContentDigest.check(digest, body: request.body)
        }
        return Verified(label: chosen, keyID: keyID, created: created, expires: expires, nonce: nonce, components: components)
    }

    /// A signature found in a request, its covered components checked but nothing verified.
    struct Located {
        /// The label it is under.
        let label: String
        /// Its Signature-Input member: the covered components and the parameters.
        let list: SFInnerList
        /// The signature's bytes.
        let signature: [UInt8]
        /// The covered component names, in order.
        let components: [String]
    }

    /// Finds the signature under `label` (or the only one) in `request`'s Signature-Input and
    /// Signature headers, and checks its covered components are supported.
    static func locate(_ request: SignedRequestParts, label: String?) throws(RequestSignatureError) -> Located {
        guard let inputField = request.field("signature-input") else {
            throw RequestSignatureError(.missingHeader, "the request has no Signature-Input header")
        }
        guard let signatureField = request.field("signature") else {
            throw RequestSignatureError(.missingHeader, "the request has no Signature header")
        }
        let inputs = try parse(inputField, field: "Signature-Input")
        let signatures = try parse(signatureField, field: "Signature")

        let chosen: String
        if let label {
            guard inputs.member(label) != nil else {
                throw RequestSignatureError(.signatureNotFound, "Signature-Input has no signature labelled \(label.debugDescription)" + listing(inputs))
            }
            chosen = label
        } else {
            guard inputs.count == 1 else {
                throw RequestSignatureError(
                    .signatureNotFound,
                    inputs.isEmpty ? "Signature-Input names no signature" : "Signature-Input names several signatures" + listing(inputs) + "; say which to verify"
                )
            }
            chosen = inputs[0].key
        }
        guard case .innerList(let list) = inputs.member(chosen) else {
            throw RequestSignatureError(.malformedField, "Signature-Input's \(chosen) is not a parenthesized list of components")
        }
        guard let signatureMember = signatures.member(chosen) else {
            throw RequestSignatureError(.signatureNotFound, "Signature has no signature labelled \(chosen.debugDescription), though Signature-Input does")
        }
        guard case .item(let signatureItem) = signatureMember, case .bytes(let signature) = signatureItem.value else {
            throw RequestSignatureError(.malformedField, "Signature's \(chosen) is not a byte sequence (:base64:)")
        }

        var components: [String] = []
        for item in list.items {
            guard case .string(let name) = item.value else {
                throw RequestSignatureError(.malformedField, "Signature-Input's \(chosen) covers \(StructuredFieldSerializer.bareItem(item.value)), which is not a quoted component name")
            }
            guard item.parameters.isEmpty else {
                throw RequestSignatureError(.unsupportedComponent, "the component \(StructuredFieldSerializer.item(item)) has parameters, which are not supported")
            }
            components.append(name)
        }
        try validate(components)
        return Located(label: chosen, list: list, signature: signature, components: components)
    }

    // MARK: The signature base

    /// The bytes signed, as text: one `"name": value` line per covered component, then the
    /// `"@signature-params"` line with `signatureParams`, the serialized covered list.
    static func signatureBase(_ request: SignedRequestParts, covering components: [String], signatureParams: String) throws(RequestSignatureError) -> String {
        var base = ""
        for name in components {
            base += StructuredFieldSerializer.string(name) + ": " + (try componentValue(name, of: request)) + "\n"
        }
        base += "\"@signature-params\": " + signatureParams
        return base
    }

    /// The value of the component `name` in `request`.
    static func componentValue(_ name: String, of request: SignedRequestParts) throws(RequestSignatureError) -> String {
        let value: String
        switch name {
        case "@method": value = request.method
        case "@target-uri": value = request.scheme.lowercased() + "://" + (try authority(of: request)) + request.target
        case "@authority": value = try authority(of: request)
        case "@scheme": value = request.scheme.lowercased()
        case "@request-target": value = request.target
        case "@path": value = request.path
        case "@query": value = request.query
        default:
            guard let field = request.field(name) else {
                throw RequestSignatureError(.missingHeader, "the request has no \(name) header, which the signature covers")
            }
            value = field
        }
        guard !value.unicodeScalars.contains(where: { $0 == "\n" || $0 == "\r" }) else {
            throw RequestSignatureError(.malformedField, "the value of \(name) has a line break, which would add a line to the signed text")
        }
        return value
    }

    private static func authority(of request: SignedRequestParts) throws(RequestSignatureError) -> String {
        guard let authority = request.authority ?? request.field("host") else {
            throw RequestSignatureError(.missingHeader, "the request has neither an authority nor a host header, which @authority needs")
        }
        return authority.lowercased()
    }

    /// Throws unless every name is a supported derived component or a lower-case field name, and
    /// none appears twice.
    static func validate(_ components: [String]) throws(RequestSignatureError) {
        var seen: Set<String> = []
        for name in components {
            if name.hasPrefix("@") {
                guard derivedComponents.contains(name) else {
                    throw RequestSignatureError(.unsupportedComponent, "the derived component \(name.debugDescription) is not supported (supported: \(derivedComponents.sorted().joined(separator: ", ")))")
                }
            } else {
                guard let first = name.utf8.first, first != UInt8(ascii: "@"),
                    name.utf8.allSatisfy({ StructuredFieldParser.isTokenCharacter($0) && !($0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z")) })
                else {
                    throw RequestSignatureError(.unsupportedComponent, "\(name.debugDescription) is not a lower-case header field name")
                }
            }
            guard seen.insert(name).inserted else {
                throw RequestSignatureError(.malformedField, "the component \(name.debugDescription) is covered twice")
            }
        }
    }

    // MARK: Parameters and fields

    private static func parse(_ text: String, field: String) throws(RequestSignatureError) -> SFDictionary {
        do {
            return try StructuredFieldParser.dictionary(text, field: field)
        } catch {
            throw RequestSignatureError(.malformedField, error.message)
        }
    }

    private static func listing(_ dictionary: SFDictionary) -> String {
        dictionary.isEmpty ? "" : " (it has " + dictionary.map(\.key).joined(separator: ", ") + ")"
    }

    private static func integer(_ name: String, in parameters: SFParameters, required: Bool) throws(RequestSignatureError) -> Int64? {
        guard let value = parameters.value(of: name) else {
            if required { throw RequestSignatureError(.missingParameter, "the signature has no \(name) parameter") }
            return nil
        }
        guard case .integer(let number) = value else {
            throw RequestSignatureError(.malformedField, "the signature's \(name) is \(StructuredFieldSerializer.bareItem(value)), not an integer")
        }
        return number
    }

    private static func string(_ name: String, in parameters: SFParameters) throws(RequestSignatureError) -> String {
        guard let value = parameters.value(of: name) else {
            throw RequestSignatureError(.missingParameter, "the signature has no \(name) parameter")
        }
        guard case .string(let text) = value else {
            throw RequestSignatureError(.malformedField, "the signature's \(name) is \(StructuredFieldSerializer.bareItem(value)), not a string")
        }
        return text
    }
}
