import COpenSSL

/// An X.509 certificate (`X509*`), parsed from PEM/DER, generated, or a TLS peer's.
///
/// `@unchecked Sendable`: never modified after init (the generator finishes signing before it
/// wraps the pointer); reading fields of a const `X509` from several threads is safe and its
/// reference count is atomic.
public final class X509Certificate: @unchecked Sendable {
    /// Owned (one reference); freed in deinit. `package` for PushlineTestCA's certificate builder.
    package let pointer: OpaquePointer

    /// Takes ownership of one reference to `pointer`.
    package init(taking pointer: OpaquePointer) {
        self.pointer = pointer
    }

    /// Parses every certificate in a PEM bundle, in order (a chain file: leaf first).
    public static func certificates(pemBytes: [UInt8]) throws -> [X509Certificate] {
        let bio = try MemoryBIO(copying: pemBytes)
        var certificates: [X509Certificate] = []
        ERR_clear_error()
        while let certificate = PEM_read_bio_X509(bio.bio, nil, nil, nil) {
            certificates.append(X509Certificate(taking: certificate))
        }
        // The loop ends with a "no start line" error at end of input: expected, not a failure.
        ERR_clear_error()
        guard !certificates.isEmpty else {
            throw CryptoError(.invalidEncoding, "no PEM certificate found")
        }
        return certificates
    }

    /// Loads every certificate in a PEM file.
    public static func certificates(pemFile path: String) throws -> [X509Certificate] {
        let bytes = try FileBytes.read(path)
        do {
            return try certificates(pemBytes: bytes)
        } catch let error as CryptoError {
            throw CryptoError(error.code, "'\(path)': \(error.message)", openSSLErrors: error.openSSLErrors)
        }
    }

    /// Parses one PEM certificate (the first in `pemBytes`).
    public convenience init(pemBytes: [UInt8]) throws {
        let bio = try MemoryBIO(copying: pemBytes)
        ERR_clear_error()
        guard let certificate = PEM_read_bio_X509(bio.bio, nil, nil, nil) else {
            throw CryptoError.openSSL(.invalidEncoding, "not a PEM certificate")
        }
        self.init(taking: certificate)
    }

    /// Parses one DER certificate.
    public convenience init(derBytes: [UInt8]) throws {
        ERR_clear_error()
        let parsed: OpaquePointer? = derBytes.withUnsafeBufferPointer { buffer in
            var cursor = buffer.baseAddress
            return d2i_X509(nil, &cursor, buffer.count)
        }
        guard let parsed else {
            throw CryptoError.openSSL(.invalidEncoding, "not a DER certificate")
        }
        self.init(taking: parsed)
    }

    /// The subject, e.g. UID=com.example.app, CN=Apple Push Services: com.example.app.
    public var subject: DistinguishedName {
        DistinguishedName(name: X509_get_subject_name(pointer))
    }

    /// The issuer's name.
    public var issuer: DistinguishedName {
        DistinguishedName(name: X509_get_issuer_name(pointer))
    }

    /// DNS names in the subjectAltName extension.
    public var dnsNames: [String] {
        subjectAltNames(type: GEN_DNS)
    }

    /// IP addresses in the subjectAltName extension, as text ("127.0.0.1", "::1").
    public var ipAddresses: [String] {
        subjectAltNames(type: GEN_IPADD)
    }

    private func subjectAltNames(type: Int32) -> [String] {
        guard let raw = X509_get_ext_d2i(pointer, NID_subject_alt_name, nil, nil) else { return [] }
        let names = OpaquePointer(raw)
        defer { GENERAL_NAMES_free(names) }
        var result: [String] = []
        for index in 0..<OPENSSL_sk_num(names) {
            guard let entry = OPENSSL_sk_value(names, index)?.assumingMemoryBound(to: GENERAL_NAME.self),
                entry.pointee.type == type
            else { continue }
            switch type {
            case GEN_DNS:
                let string = entry.pointee.d.dNSName
                if let data = ASN1_STRING_get0_data(string) {
                    result.append(String(decoding: UnsafeBufferPointer(start: data, count: Int(ASN1_STRING_length(string))), as: UTF8.self))
                }
            default:
                let string = entry.pointee.d.iPAddress
                if let data = ASN1_STRING_get0_data(string) {
                    let bytes = Array(UnsafeBufferPointer(start: data, count: Int(ASN1_STRING_length(string))))
                    if bytes.count == 4 {
                        result.append(bytes.map(String.init).joined(separator: "."))
                    } else if bytes.count == 16 {
                        result.append(
                            stride(from: 0, to: 16, by: 2).map {
                                String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16)
                            }.joined(separator: ":")
                        )
                    }
                }
            }
        }
        return result
    }

    /// The certificate as PEM.
    public func pem() throws -> String {
        let bio = try MemoryBIO()
        ERR_clear_error()
        guard PEM_write_bio_X509(bio.bio, pointer) == 1 else {
            throw CryptoError.openSSL(.generation, "cannot encode the certificate as PEM")
        }
        return String(decoding: bio.bytes, as: UTF8.self)
    }

    /// The certificate as DER.
    public func der() throws -> [UInt8] {
        ERR_clear_error()
        var out: UnsafeMutablePointer<UInt8>?
        let length = i2d_X509(pointer, &out)
        guard length > 0, let out else {
            throw CryptoError.openSSL(.generation, "cannot encode the certificate as DER")
        }
        defer { CRYPTO_free(out, #fileID, #line) }
        return Array(UnsafeBufferPointer(start: out, count: Int(length)))
    }

    /// The public key in the certificate.
    public func publicKey() throws -> PublicKey {
        ERR_clear_error()
        // X509_get_pubkey returns a new reference, which PublicKey takes.
        guard let key = X509_get_pubkey(pointer) else {
            throw CryptoError.openSSL(.invalidEncoding, "certificate has no usable public key")
        }
        return PublicKey(taking: key)
    }

    deinit {
        X509_free(pointer)
    }
}

extension DistinguishedName {
    /// Reads an `X509_NAME*` borrowed from its certificate.
    init(name: OpaquePointer?) {
        var attributes: [Attribute] = []
        guard let name else {
            self.init(attributes)
            return
        }
        for index in 0..<X509_NAME_entry_count(name) {
            guard let entry = X509_NAME_get_entry(name, index) else { continue }
            let object = X509_NAME_ENTRY_get_object(entry)
            let nid = OBJ_obj2nid(object)
            var type: String
            if nid != NID_undef, let short = OBJ_nid2sn(nid) {
                type = String(cString: short)
            } else {
                var buffer = [CChar](repeating: 0, count: 128)
                let length = OBJ_obj2txt(&buffer, Int32(buffer.count), object, 1)
                type = String(decoding: buffer.prefix(Int(max(0, min(length, 127)))).map { UInt8(bitPattern: $0) }, as: UTF8.self)
            }
            var utf8: UnsafeMutablePointer<UInt8>?
            let length = ASN1_STRING_to_UTF8(&utf8, X509_NAME_ENTRY_get_data(entry))
            var value = ""
            if length >= 0, let utf8 {
                value = String(decoding: UnsafeBufferPointer(start: utf8, count: Int(length)), as: UTF8.self)
                CRYPTO_free(utf8, #fileID, #line)
            }
            attributes.append(Attribute(type, value))
        }
        self.init(attributes)
    }
}
