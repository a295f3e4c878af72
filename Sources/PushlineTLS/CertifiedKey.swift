import COpenSSL

/// A certificate with its private key and the chain above it (intermediates, optionally the CA),
/// e.g. a TLS identity loaded from a PKCS#12 or issued by PushlineTestCA's `CertificateAuthority`.
public struct CertifiedKey: Sendable {
    public var certificate: X509Certificate
    public var privateKey: PrivateKey
    /// Certificates above `certificate`, nearest first; sent to the peer after the leaf.
    public var chain: [X509Certificate]

    public init(certificate: X509Certificate, privateKey: PrivateKey, chain: [X509Certificate] = []) {
        self.certificate = certificate
        self.privateKey = privateKey
        self.chain = chain
    }

    /// Loads a PKCS#12 (`.p12`) as Apple issues push certificates: key, certificate, optional chain.
    public init(pkcs12File path: String, password: String) throws {
        let bytes = try FileBytes.read(path)
        do {
            try self.init(pkcs12: bytes, password: password)
        } catch let error as CryptoError {
            throw CryptoError(error.code, "'\(path)': \(error.message)", openSSLErrors: error.openSSLErrors)
        }
    }

    /// Parses PKCS#12 bytes.
    public init(pkcs12 bytes: [UInt8], password: String) throws {
        ERR_clear_error()
        let parsed: OpaquePointer? = bytes.withUnsafeBufferPointer { buffer in
            var cursor = buffer.baseAddress
            return d2i_PKCS12(nil, &cursor, buffer.count)
        }
        guard let p12 = parsed else {
            throw CryptoError.openSSL(.invalidEncoding, "not a PKCS#12 file")
        }
        defer { PKCS12_free(p12) }
        guard password.withCString({ PKCS12_verify_mac(p12, $0, -1) }) == 1 else {
            throw CryptoError.openSSL(.wrongPassword, "PKCS#12 password is wrong (MAC does not verify)")
        }
        var key: OpaquePointer?
        var certificate: OpaquePointer?
        var extra: OpaquePointer?
        // PKCS12_parse hands us one reference to each output, which the wrappers below take.
        guard password.withCString({ PKCS12_parse(p12, $0, &key, &certificate, &extra) }) == 1 else {
            throw CryptoError.openSSL(.invalidEncoding, "cannot decode PKCS#12 contents")
        }
        var chain: [X509Certificate] = []
        if let extra {
            // Take each certificate's reference, then free the stack without freeing them.
            for index in 0..<pushline_sk_X509_num(extra) {
                if let cert = pushline_sk_X509_value(extra, index) {
                    chain.append(X509Certificate(taking: cert))
                }
            }
            pushline_sk_X509_free(extra)
        }
        guard let key, let certificate else {
            if let key { EVP_PKEY_free(key) }
            if let certificate { X509_free(certificate) }
            throw CryptoError(.invalidEncoding, "PKCS#12 lacks a private key or certificate")
        }
        self.init(certificate: X509Certificate(taking: certificate), privateKey: PrivateKey(taking: key), chain: chain)
    }

    /// Encodes key, certificate and chain as PKCS#12 protected by `password`
    /// (OpenSSL 3 defaults: AES-256-CBC, PBKDF2, SHA-256 MAC).
    public func pkcs12(password: String, friendlyName: String? = nil) throws -> [UInt8] {
        ERR_clear_error()
        var stack: OpaquePointer?
        if !chain.isEmpty {
            stack = pushline_sk_X509_new_null()
            for certificate in chain {
                // The stack borrows the pointers; PKCS12_create copies what it needs.
                _ = pushline_sk_X509_push(stack, certificate.pointer)
            }
        }
        defer { if let stack { pushline_sk_X509_free(stack) } }
        let p12: OpaquePointer? = password.withCString { password in
            if let friendlyName {
                return friendlyName.withCString { name in
                    PKCS12_create(password, name, privateKey.pointer, certificate.pointer, stack, 0, 0, 0, 0, 0)
                }
            }
            return PKCS12_create(password, nil, privateKey.pointer, certificate.pointer, stack, 0, 0, 0, 0, 0)
        }
        guard let p12 else {
            throw CryptoError.openSSL(.generation, "cannot create PKCS#12")
        }
        defer { PKCS12_free(p12) }
        var out: UnsafeMutablePointer<UInt8>?
        let length = i2d_PKCS12(p12, &out)
        guard length > 0, let out else {
            throw CryptoError.openSSL(.generation, "cannot encode PKCS#12")
        }
        defer { CRYPTO_free(out, #fileID, #line) }
        return Array(UnsafeBufferPointer(start: out, count: Int(length)))
    }

    /// Writes the certificate followed by the chain as PEM to `certificatePath`, and the key
    /// (PKCS#8, mode 0600) to `keyPath`.
    public func writePEM(certificatePath: String, keyPath: String) throws {
        var pem = try certificate.pem()
        for certificate in chain {
            pem += try certificate.pem()
        }
        try FileBytes.write(Array(pem.utf8), to: certificatePath)
        try privateKey.writePEM(to: keyPath)
    }

    /// Writes `pkcs12(password:)` to `path` with mode 0600.
    public func writePKCS12(to path: String, password: String) throws {
        try FileBytes.write(pkcs12(password: password), to: path, mode: 0o600)
    }
}
