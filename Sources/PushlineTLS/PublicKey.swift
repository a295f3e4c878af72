import COpenSSL

/// A public key (`EVP_PKEY*` without the private part), e.g. to verify ES256 signatures.
///
/// `@unchecked Sendable`: immutable after init; OpenSSL 3 allows concurrent read-only use of an
/// `EVP_PKEY` (each verification creates its own `EVP_MD_CTX`).
public final class PublicKey: @unchecked Sendable {
    /// Owned; freed in deinit.
    let pointer: OpaquePointer

    init(taking pointer: OpaquePointer) {
        self.pointer = pointer
    }

    /// Parses a PEM SubjectPublicKeyInfo ("-----BEGIN PUBLIC KEY-----").
    public convenience init(pemBytes: [UInt8]) throws {
        let bio = try MemoryBIO(copying: pemBytes)
        ERR_clear_error()
        guard let key = PEM_read_bio_PUBKEY(bio.bio, nil, nil, nil) else {
            throw CryptoError.openSSL(.invalidEncoding, "not a PEM public key")
        }
        self.init(taking: key)
    }

    /// Loads a PEM public key file.
    public convenience init(pemFile path: String) throws {
        let bytes = try FileBytes.read(path)
        do {
            try self.init(pemBytes: bytes)
        } catch let error as CryptoError {
            throw CryptoError(error.code, "'\(path)': \(error.message)", openSSLErrors: error.openSSLErrors)
        }
    }

    /// The key as PEM.
    public func pem() throws -> String {
        let bio = try MemoryBIO()
        ERR_clear_error()
        guard PEM_write_bio_PUBKEY(bio.bio, pointer) == 1 else {
            throw CryptoError.openSSL(.generation, "cannot encode the public key as PEM")
        }
        return String(decoding: bio.bytes, as: UTF8.self)
    }

    deinit {
        EVP_PKEY_free(pointer)
    }
}
