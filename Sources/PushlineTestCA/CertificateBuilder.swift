import COpenSSL
import PushlineTLS

/// Builds and signs one X.509 v3 certificate with OpenSSL's X509 API.
enum CertificateBuilder {
    /// `issuer` nil means self-signed with `key`. Extensions are (NID, OpenSSL config value).
    static func build(
        subject: DistinguishedName,
        key: PrivateKey,
        issuer: CertifiedKey?,
        validityDays: Int,
        extensions: [(Int32, String)]
    ) throws -> X509Certificate {
        ERR_clear_error()
        guard let x509 = X509_new() else {
            throw CryptoError.openSSL(.generation, "cannot allocate X509")
        }
        // Wrapped at once so every early exit frees it.
        let certificate = X509Certificate(taking: x509)
        guard X509_set_version(x509, Int(X509_VERSION_3)) == 1 else {
            throw CryptoError.openSSL(.generation, "cannot set certificate version")
        }
        try setRandomSerial(x509)
        guard X509_gmtime_adj(X509_getm_notBefore(x509), -3600) != nil,
            X509_gmtime_adj(X509_getm_notAfter(x509), validityDays * 86400) != nil
        else {
            throw CryptoError.openSSL(.generation, "cannot set certificate validity")
        }
        guard X509_set_pubkey(x509, key.pointer) == 1 else {
            throw CryptoError.openSSL(.generation, "cannot set certificate public key")
        }
        let name = try x509Name(subject)
        defer { X509_NAME_free(name) }
        // X509_set_*_name copy the name.
        guard X509_set_subject_name(x509, name) == 1 else {
            throw CryptoError.openSSL(.generation, "cannot set certificate subject")
        }
        let issuerName = issuer.map { X509_get_subject_name($0.certificate.pointer) } ?? name
        guard X509_set_issuer_name(x509, issuerName) == 1 else {
            throw CryptoError.openSSL(.generation, "cannot set certificate issuer")
        }
        var context = X509V3_CTX()
        // The zero-initialised context has no config database (X509V3_set_ctx_nodb).
        X509V3_set_ctx(&context, issuer?.certificate.pointer ?? x509, x509, nil, nil, 0)
        for (nid, value) in extensions {
            guard let ext = value.withCString({ X509V3_EXT_conf_nid(nil, &context, nid, $0) }) else {
                throw CryptoError.openSSL(.generation, "cannot build extension \(String(cString: OBJ_nid2sn(nid))) = \(value)")
            }
            // X509_add_ext copies the extension.
            defer { X509_EXTENSION_free(ext) }
            guard X509_add_ext(x509, ext, -1) == 1 else {
                throw CryptoError.openSSL(.generation, "cannot add extension \(value)")
            }
        }
        let signingKey = issuer?.privateKey ?? key
        guard X509_sign(x509, signingKey.pointer, EVP_sha256()) > 0 else {
            throw CryptoError.openSSL(.generation, "cannot sign certificate")
        }
        return certificate
    }

    /// A positive random 127-bit serial: unique enough that a CA never repeats one.
    private static func setRandomSerial(_ x509: OpaquePointer) throws {
        guard let serial = BN_new() else {
            throw CryptoError.openSSL(.generation, "cannot allocate serial")
        }
        defer { BN_free(serial) }
        guard BN_rand(serial, 127, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) == 1,
            BN_to_ASN1_INTEGER(serial, X509_get_serialNumber(x509)) != nil
        else {
            throw CryptoError.openSSL(.generation, "cannot set certificate serial")
        }
    }

    /// A new `X509_NAME*` (caller frees) from `name`; types are OpenSSL short or long names or OIDs.
    private static func x509Name(_ name: DistinguishedName) throws -> OpaquePointer {
        guard let x509Name = X509_NAME_new() else {
            throw CryptoError.openSSL(.generation, "cannot allocate X509_NAME")
        }
        for attribute in name.attributes {
            let added = attribute.type.withCString { type in
                attribute.value.withCString { value in
                    value.withMemoryRebound(to: UInt8.self, capacity: attribute.value.utf8.count) {
                        X509_NAME_add_entry_by_txt(x509Name, type, MBSTRING_UTF8, $0, -1, -1, 0)
                    }
                }
            }
            guard added == 1 else {
                X509_NAME_free(x509Name)
                throw CryptoError.openSSL(.generation, "cannot add name attribute \(attribute.type)=\(attribute.value)")
            }
        }
        return x509Name
    }
}
