import COpenSSL
import PushlineTLS

/// A certificate authority for tests, the benchmarks and the mock APNs server's `--self-signed`
/// identity: a self-signed P-256 CA that issues server certificates (DNS and IP SANs) and client
/// certificates (any subject, e.g. UID=com.example.app, CN=Apple Push Services: com.example.app),
/// all signed with SHA-256. Kept out of PushlineTLS so the production TLS module ships no CA.
public struct CertificateAuthority: Sendable {
    /// The CA's self-signed certificate and key.
    public var identity: CertifiedKey
    public var certificate: X509Certificate { identity.certificate }

    /// Uses an existing CA certificate and key (e.g. loaded from ca.pem / ca.key).
    public init(identity: CertifiedKey) {
        self.identity = identity
    }

    /// Creates a new self-signed CA valid for `validityDays` (from one hour ago, for clock skew).
    public static func create(
        subject: DistinguishedName = DistinguishedName([.init("O", "Pushline"), .init("CN", "Pushline Test CA")]),
        validityDays: Int = 3650
    ) throws -> CertificateAuthority {
        let key = try PrivateKey.generateP256()
        let certificate = try CertificateBuilder.build(
            subject: subject,
            key: key,
            issuer: nil,
            validityDays: validityDays,
            extensions: [
                (NID_basic_constraints, "critical,CA:TRUE"),
                (NID_key_usage, "critical,keyCertSign,cRLSign"),
                (NID_subject_key_identifier, "hash"),
            ]
        )
        return CertificateAuthority(identity: CertifiedKey(certificate: certificate, privateKey: key))
    }

    /// Issues a server certificate for `dnsNames` and `ipAddresses` ("127.0.0.1", "::1"), with a
    /// new P-256 key. The chain holds the CA certificate so a client trusting the CA verifies it.
    public func issueServerCertificate(
        dnsNames: [String],
        ipAddresses: [String] = [],
        commonName: String? = nil,
        validityDays: Int = 825
    ) throws -> CertifiedKey {
        let sans = dnsNames.map { "DNS:\($0)" } + ipAddresses.map { "IP:\($0)" }
        guard !sans.isEmpty else {
            throw CryptoError(.generation, "a server certificate needs at least one DNS name or IP address")
        }
        let key = try PrivateKey.generateP256()
        let certificate = try CertificateBuilder.build(
            subject: DistinguishedName(commonName: commonName ?? dnsNames.first ?? ipAddresses[0]),
            key: key,
            issuer: identity,
            validityDays: validityDays,
            extensions: [
                (NID_basic_constraints, "critical,CA:FALSE"),
                (NID_key_usage, "critical,digitalSignature,keyEncipherment"),
                (NID_ext_key_usage, "serverAuth"),
                (NID_subject_alt_name, sans.joined(separator: ",")),
                (NID_subject_key_identifier, "hash"),
                (NID_authority_key_identifier, "keyid:always"),
            ]
        )
        return CertifiedKey(certificate: certificate, privateKey: key, chain: [identity.certificate])
    }

    /// Issues a client certificate with `subject` and a new P-256 key, like the push certificates
    /// Apple issues (subject UID = bundle id). The chain holds the CA certificate.
    public func issueClientCertificate(subject: DistinguishedName, validityDays: Int = 365) throws -> CertifiedKey {
        let key = try PrivateKey.generateP256()
        let certificate = try CertificateBuilder.build(
            subject: subject,
            key: key,
            issuer: identity,
            validityDays: validityDays,
            extensions: [
                (NID_basic_constraints, "critical,CA:FALSE"),
                (NID_key_usage, "critical,digitalSignature"),
                (NID_ext_key_usage, "clientAuth"),
                (NID_subject_key_identifier, "hash"),
                (NID_authority_key_identifier, "keyid:always"),
            ]
        )
        return CertifiedKey(certificate: certificate, privateKey: key, chain: [identity.certificate])
    }
}
