import COpenSSL

/// ECDSA P-256 with SHA-256 as JWS "ES256" uses it: signatures are the raw 64 bytes r || s
/// (each big-endian, left-padded to 32 bytes), not DER.
public enum ES256 {
    /// Length of a raw ES256 signature.
    public static let signatureLength = 64

    /// Signs `message` (hashed with SHA-256 here) and returns the raw 64-byte r || s.
    public static func sign<Bytes: Collection<UInt8>>(_ message: Bytes, with key: PrivateKey) throws -> [UInt8] {
        guard key.isP256 else {
            throw CryptoError(.unsupportedKey, "ES256 needs an EC P-256 private key")
        }
        ERR_clear_error()
        guard let digest = EVP_MD_CTX_new() else {
            throw CryptoError.openSSL(.signing, "cannot allocate EVP_MD_CTX")
        }
        defer { EVP_MD_CTX_free(digest) }
        guard EVP_DigestSignInit(digest, nil, EVP_sha256(), nil, key.pointer) == 1 else {
            throw CryptoError.openSSL(.signing, "ES256: EVP_DigestSignInit failed")
        }
        // An ECDSA P-256 DER signature is at most 72 bytes.
        var der = [UInt8](repeating: 0, count: 80)
        var derLength = der.count
        let signed = withContiguousBytes(message) { message in
            EVP_DigestSign(digest, &der, &derLength, message.baseAddress?.assumingMemoryBound(to: UInt8.self), message.count)
        }
        guard signed == 1 else {
            throw CryptoError.openSSL(.signing, "ES256: EVP_DigestSign failed")
        }
        return try rawSignature(fromDER: Array(der.prefix(derLength)))
    }

    /// Whether `signature` (raw r || s) is a valid ES256 signature of `message` by `key`.
    /// Malformed signatures (wrong length, r or s out of range) are `false`.
    public static func verify<Bytes: Collection<UInt8>>(_ signature: [UInt8], of message: Bytes, with key: PublicKey) throws -> Bool {
        guard evpKeyIsP256(key.pointer) else {
            throw CryptoError(.unsupportedKey, "ES256 needs an EC P-256 public key")
        }
        guard signature.count == signatureLength, let der = try? derSignature(fromRaw: signature) else {
            return false
        }
        ERR_clear_error()
        guard let digest = EVP_MD_CTX_new() else {
            throw CryptoError.openSSL(.signing, "cannot allocate EVP_MD_CTX")
        }
        defer { EVP_MD_CTX_free(digest) }
        guard EVP_DigestVerifyInit(digest, nil, EVP_sha256(), nil, key.pointer) == 1 else {
            throw CryptoError.openSSL(.signing, "ES256: EVP_DigestVerifyInit failed")
        }
        let result = withContiguousBytes(message) { message in
            EVP_DigestVerify(digest, der, der.count, message.baseAddress?.assumingMemoryBound(to: UInt8.self), message.count)
        }
        // 0 is a bad signature; negative values are errors about the inputs, also "not valid".
        ERR_clear_error()
        return result == 1
    }

    /// Converts a DER `ECDSA-Sig-Value` to raw r || s.
    public static func rawSignature(fromDER der: [UInt8]) throws -> [UInt8] {
        ERR_clear_error()
        let parsed: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_ECDSA_SIG(nil, &cursor, buffer.count)
        }
        guard let parsed else {
            throw CryptoError.openSSL(.invalidEncoding, "not a DER ECDSA signature")
        }
        defer { ECDSA_SIG_free(parsed) }
        var r: OpaquePointer?
        var s: OpaquePointer?
        ECDSA_SIG_get0(parsed, &r, &s)
        var raw = [UInt8](repeating: 0, count: signatureLength)
        let ok = raw.withUnsafeMutableBufferPointer { out in
            BN_bn2binpad(r, out.baseAddress, 32) == 32 && BN_bn2binpad(s, out.baseAddress! + 32, 32) == 32
        }
        guard ok else {
            throw CryptoError.openSSL(.invalidEncoding, "ECDSA signature values do not fit P-256")
        }
        return raw
    }

    /// Converts raw r || s (64 bytes) to a DER `ECDSA-Sig-Value`, e.g. for `openssl dgst -verify`.
    public static func derSignature(fromRaw raw: [UInt8]) throws -> [UInt8] {
        guard raw.count == signatureLength else {
            throw CryptoError(.invalidEncoding, "an ES256 signature is 64 bytes, got \(raw.count)")
        }
        ERR_clear_error()
        guard let signature = ECDSA_SIG_new() else {
            throw CryptoError.openSSL(.generation, "cannot allocate ECDSA_SIG")
        }
        defer { ECDSA_SIG_free(signature) }
        let r = raw.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress, 32, nil) }
        let s = raw.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress! + 32, 32, nil) }
        // ECDSA_SIG_set0 takes ownership of r and s only on success.
        guard let r, let s, ECDSA_SIG_set0(signature, r, s) == 1 else {
            BN_free(r)
            BN_free(s)
            throw CryptoError.openSSL(.generation, "cannot build ECDSA_SIG")
        }
        var out: UnsafeMutablePointer<UInt8>?
        let length = i2d_ECDSA_SIG(signature, &out)
        guard length > 0, let out else {
            throw CryptoError.openSSL(.generation, "cannot encode ECDSA_SIG as DER")
        }
        defer { CRYPTO_free(out, #fileID, #line) }
        return Array(UnsafeBufferPointer(start: out, count: Int(length)))
    }
}

/// Calls `body` with the bytes of `collection`, copying only if it is not contiguous.
func withContiguousBytes<Bytes: Collection<UInt8>, Result>(
    _ collection: Bytes,
    _ body: (UnsafeRawBufferPointer) throws -> Result
) rethrows -> Result {
    if let result = try collection.withContiguousStorageIfAvailable({ try body(UnsafeRawBufferPointer($0)) }) {
        return result
    }
    return try Array(collection).withUnsafeBytes(body)
}

/// Whether an `EVP_PKEY*` is an EC key on the P-256 curve.
func evpKeyIsP256(_ key: OpaquePointer) -> Bool {
    guard EVP_PKEY_get_base_id(key) == EVP_PKEY_EC else { return false }
    var name = [CChar](repeating: 0, count: 64)
    var length = 0
    guard EVP_PKEY_get_group_name(key, &name, name.count, &length) == 1 else { return false }
    let group = String(decoding: name.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    return group == "prime256v1" || group == "P-256"
}
