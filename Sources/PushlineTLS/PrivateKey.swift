import COpenSSL

/// A private key (`EVP_PKEY*`) loaded from PEM (PKCS#8 `.p8`, or traditional) or generated.
///
/// Immutable after init. `@unchecked Sendable`: the key is never modified after creation and
/// OpenSSL 3 documents `EVP_PKEY` as safe to use read-only from many threads at once (signing
/// creates its own `EVP_MD_CTX` per call); the refcount operations are atomic.
public final class PrivateKey: @unchecked Sendable {
    /// Owned; freed in deinit. `package` for PushlineTestCA's certificate builder (signing).
    package let pointer: OpaquePointer

    /// Takes ownership of `pointer`.
    init(taking pointer: OpaquePointer) {
        self.pointer = pointer
    }

    /// Parses a PEM private key; `password` decrypts an encrypted one. Without a password an
    /// encrypted key fails instead of OpenSSL prompting on the terminal.
    public convenience init(pemBytes: [UInt8], password: String? = nil) throws {
        let bio = try MemoryBIO(copying: pemBytes)
        ERR_clear_error()
        // With a NULL callback, OpenSSL treats the user-data argument as a NUL-terminated password.
        let key = (password ?? "").withCString { password in
            PEM_read_bio_PrivateKey(bio.bio, nil, nil, UnsafeMutableRawPointer(mutating: password))
        }
        guard let key else {
            throw CryptoError.openSSL(.invalidEncoding, "not a PEM private key (or wrong password)")
        }
        self.init(taking: key)
    }

    /// Loads a PEM private key file, e.g. Apple's `AuthKey_XXXXXXXXXX.p8`.
    public convenience init(pemFile path: String, password: String? = nil) throws {
        let bytes = try FileBytes.read(path)
        do {
            try self.init(pemBytes: bytes, password: password)
        } catch let error as CryptoError {
            throw CryptoError(error.code, "'\(path)': \(error.message)", openSSLErrors: error.openSSLErrors)
        }
    }

    /// Generates a new EC P-256 key (for ES256 and for certificates).
    public static func generateP256() throws -> PrivateKey {
        ERR_clear_error()
        guard let key = pushline_EVP_EC_gen_P256() else {
            throw CryptoError.openSSL(.generation, "cannot generate a P-256 key")
        }
        return PrivateKey(taking: key)
    }

    /// Whether this is an EC key on P-256 (prime256v1), the only curve ES256 allows.
    public var isP256: Bool { evpKeyIsP256(pointer) }

    /// The private key as PKCS#8 PEM ("-----BEGIN PRIVATE KEY-----"), the `.p8` format.
    public func pkcs8PEM() throws -> String {
        let bio = try MemoryBIO()
        ERR_clear_error()
        guard PEM_write_bio_PrivateKey(bio.bio, pointer, nil, nil, 0, nil, nil) == 1 else {
            throw CryptoError.openSSL(.generation, "cannot encode the private key as PEM")
        }
        return String(decoding: bio.bytes, as: UTF8.self)
    }

    /// The public half as a PEM SubjectPublicKeyInfo ("-----BEGIN PUBLIC KEY-----").
    public func publicKeyPEM() throws -> String {
        let bio = try MemoryBIO()
        ERR_clear_error()
        guard PEM_write_bio_PUBKEY(bio.bio, pointer) == 1 else {
            throw CryptoError.openSSL(.generation, "cannot encode the public key as PEM")
        }
        return String(decoding: bio.bytes, as: UTF8.self)
    }

    /// The public half as a `PublicKey`.
    public func publicKey() throws -> PublicKey {
        try PublicKey(pemBytes: Array(publicKeyPEM().utf8))
    }

    /// Writes the PKCS#8 PEM to `path` with mode 0600.
    public func writePEM(to path: String) throws {
        try FileBytes.write(Array(pkcs8PEM().utf8), to: path, mode: 0o600)
    }

    deinit {
        EVP_PKEY_free(pointer)
    }
}
