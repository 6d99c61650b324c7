import CSodium

/// The only code that calls libsodium: Ed25519 signatures and BLAKE2b hashes, as typed values.
public enum Sodium {
    /// libsodium must be initialized once before use; `sodium_init` is safe to call again.
    static let ready: Bool = sodium_init() >= 0

    static func check() {
        precondition(ready, "libsodium could not be initialized")
    }
}

/// An Ed25519 key pair. The secret half never leaves the value except through `secretBytes`,
/// which only a key store uses to persist it.
public struct SigningKey: Sendable, Equatable {
    public static let publicKeyBytes = 32
    public static let secretKeyBytes = 64
    public static let signatureBytes = 64

    public let publicKey: [UInt8]
    let secret: [UInt8]

    /// A new key pair from the system's random source.
    public static func generate() -> SigningKey {
        Sodium.check()
        var pk = [UInt8](repeating: 0, count: publicKeyBytes)
        var sk = [UInt8](repeating: 0, count: secretKeyBytes)
        _ = crypto_sign_keypair(&pk, &sk)
        return SigningKey(publicKey: pk, secret: sk)
    }

    /// A key pair from its 64 stored secret bytes (which hold the public key too); nil when the
    /// bytes are not a key.
    public init?(secretBytes: [UInt8]) {
        Sodium.check()
        guard secretBytes.count == Self.secretKeyBytes else { return nil }
        var pk = [UInt8](repeating: 0, count: Self.publicKeyBytes)
        guard crypto_sign_ed25519_sk_to_pk(&pk, secretBytes) == 0 else { return nil }
        self.init(publicKey: pk, secret: secretBytes)
    }

    /// The length of a seed, the 32 random bytes a key pair is derived from.
    public static let seedBytes = 32

    /// The key pair derived from a 32-byte seed (the form other tools often store an Ed25519
    /// private key in); nil when the seed is not 32 bytes.
    public init?(seed: [UInt8]) {
        Sodium.check()
        guard seed.count == Self.seedBytes else { return nil }
        var pk = [UInt8](repeating: 0, count: Self.publicKeyBytes)
        var sk = [UInt8](repeating: 0, count: Self.secretKeyBytes)
        guard crypto_sign_seed_keypair(&pk, &sk, seed) == 0 else { return nil }
        self.init(publicKey: pk, secret: sk)
    }

    private init(publicKey: [UInt8], secret: [UInt8]) {
        self.publicKey = publicKey
        self.secret = secret
    }

    /// The secret key's bytes, for a key store to persist.
    public var secretBytes: [UInt8] { secret }

    /// A detached signature of `message`.
    public func sign(_ message: [UInt8]) -> [UInt8] {
        var signature = [UInt8](repeating: 0, count: Self.signatureBytes)
        _ = crypto_sign_detached(&signature, nil, message, UInt64(message.count), secret)
        return signature
    }

    public static func == (a: SigningKey, b: SigningKey) -> Bool { a.publicKey == b.publicKey }
}

public enum Ed25519 {
    /// Whether `signature` is `publicKey`'s signature of `message`.
    public static func verify(signature: [UInt8], message: [UInt8], publicKey: [UInt8]) -> Bool {
        Sodium.check()
        guard signature.count == SigningKey.signatureBytes, publicKey.count == SigningKey.publicKeyBytes else { return false }
        return crypto_sign_verify_detached(signature, message, UInt64(message.count), publicKey) == 0
    }
}

public enum BLAKE2b {
    public static let hashBytes = 32

    /// The 32-byte BLAKE2b hash of `bytes`.
    public static func hash(_ bytes: UnsafeRawBufferPointer) -> [UInt8] {
        Sodium.check()
        var out = [UInt8](repeating: 0, count: hashBytes)
        _ = crypto_generichash(&out, hashBytes, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(bytes.count), nil, 0)
        return out
    }

    public static func hash(_ bytes: [UInt8]) -> [UInt8] { bytes.withUnsafeBytes { hash($0) } }

    /// The 32-byte BLAKE2b hash of `bytes`, written to the first 32 bytes of `out` (no array
    /// made: for a hash per record of a long read).
    public static func hash(_ bytes: UnsafeRawBufferPointer, into out: UnsafeMutableRawBufferPointer) {
        precondition(out.count >= hashBytes, "a BLAKE2b hash needs \(hashBytes) bytes")
        Sodium.check()
        _ = crypto_generichash(
            out.baseAddress!.assumingMemoryBound(to: UInt8.self), hashBytes, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self),
            UInt64(bytes.count), nil, 0)
    }
}

extension Sodium {
    /// SHA-256, fed in pieces.
    public struct SHA256Hash {
        private var state = crypto_hash_sha256_state()

        public init() {
            Sodium.check()
            crypto_hash_sha256_init(&state)
        }

        public mutating func update(_ bytes: UnsafeRawBufferPointer) {
            guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
            crypto_hash_sha256_update(&state, base.assumingMemoryBound(to: UInt8.self), UInt64(bytes.count))
        }

        /// The 32-byte digest; the value must not be fed again afterwards.
        public mutating func finalize() -> [UInt8] {
            var out = [UInt8](repeating: 0, count: 32)
            crypto_hash_sha256_final(&state, &out)
            return out
        }

        /// The SHA-256 of `bytes` written to `out` (32 bytes) in one call, for many short
        /// messages: no state is kept and nothing is allocated.
        public static func hash(_ bytes: UnsafeRawBufferPointer, into out: UnsafeMutableRawBufferPointer) {
            precondition(out.count >= 32)
            Sodium.check()
            crypto_hash_sha256(
                out.baseAddress!.assumingMemoryBound(to: UInt8.self), bytes.baseAddress?.assumingMemoryBound(to: UInt8.self),
                UInt64(bytes.count))
        }
    }
}
