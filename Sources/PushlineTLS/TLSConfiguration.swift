/// How a `TLSContext` is built: role, versions, trust, identity, ALPN. A value: build it, then
/// create one `TLSContext` from it and share that across connections.
public struct TLSConfiguration: Sendable {
    public enum Role: Sendable, Hashable {
        case client
        case server
    }

    /// The lowest protocol version accepted. TLS 1.2 is the floor: APNs requires it.
    public enum MinimumVersion: Sendable, Hashable {
        case tls12
        case tls13
    }

    /// Certificates trusted to sign the peer's certificate.
    public struct TrustRoots: Sendable {
        /// The operating system's store (Debian: /etc/ssl/certs via OpenSSL's default paths).
        public var includeSystemStore: Bool
        /// Extra PEM files of CA certificates.
        public var caFiles: [String]
        /// Extra CA certificates already in memory.
        public var certificates: [X509Certificate]

        public init(includeSystemStore: Bool, caFiles: [String] = [], certificates: [X509Certificate] = []) {
            self.includeSystemStore = includeSystemStore
            self.caFiles = caFiles
            self.certificates = certificates
        }

        /// The system store only (the default for clients: the real APNs).
        public static let system = TrustRoots(includeSystemStore: true)
        /// The system store plus a PEM CA file (e.g. the mock's ca.pem).
        public static func system(plusCAFile path: String) -> TrustRoots {
            TrustRoots(includeSystemStore: true, caFiles: [path])
        }
        /// Only the CAs in a PEM file.
        public static func caFile(_ path: String) -> TrustRoots {
            TrustRoots(includeSystemStore: false, caFiles: [path])
        }
        /// Only the given CA certificates.
        public static func certificates(_ certificates: [X509Certificate]) -> TrustRoots {
            TrustRoots(includeSystemStore: false, certificates: certificates)
        }
    }

    /// The certificate (with chain) and private key this side presents.
    public enum Identity: Sendable {
        /// A PEM chain file (leaf first) and a PEM private key file (optionally encrypted).
        case pemFiles(certificateChain: String, privateKey: String, password: String?)
        /// A PKCS#12 file (`.p12`) and its password, as Apple issues push certificates.
        case pkcs12File(String, password: String)
        /// A certificate and key in memory.
        case certifiedKey(CertifiedKey)
    }

    /// Whether a server asks for and checks client certificates.
    public enum ClientCertificateVerification: Sendable {
        /// Clients are not asked for certificates.
        case none
        /// Clients must present a certificate signed by one of these roots, or the handshake fails.
        case require(TrustRoots)
    }

    public var role: Role
    public var minimumVersion: MinimumVersion = .tls12
    /// Client: roots that must sign the server's certificate.
    public var trustRoots: TrustRoots = .system
    /// Client: verify the server's certificate chain and name. On by default; turning it off
    /// is for diagnostics only.
    public var verifyPeer: Bool = true
    /// Client: the host name (or IP address) sent as SNI (names only) and checked against the
    /// server certificate. Each handler may override it.
    public var serverHostname: String?
    /// This side's certificate and key: required for servers, optional for clients.
    public var identity: Identity?
    /// Server: client certificate policy.
    public var clientCertificateVerification: ClientCertificateVerification = .none
    /// ALPN protocols, in preference order. Empty disables ALPN.
    public var alpnProtocols: [String] = ["h2"]
    /// Whether a handshake that did not negotiate one of `alpnProtocols` is an error
    /// (`TLSError.alpnNotNegotiated`). Ignored when `alpnProtocols` is empty.
    public var requireALPN: Bool = true

    public init(role: Role) {
        self.role = role
    }

    /// A client: verifies the server against `trustRoots` and `serverHostname`, offers h2.
    public static func client(
        serverHostname: String? = nil,
        trustRoots: TrustRoots = .system,
        identity: Identity? = nil
    ) -> TLSConfiguration {
        var configuration = TLSConfiguration(role: .client)
        configuration.serverHostname = serverHostname
        configuration.trustRoots = trustRoots
        configuration.identity = identity
        return configuration
    }

    /// A server presenting `identity`, selecting h2.
    public static func server(
        identity: Identity,
        clientCertificateVerification: ClientCertificateVerification = .none
    ) -> TLSConfiguration {
        var configuration = TLSConfiguration(role: .server)
        configuration.identity = identity
        configuration.clientCertificateVerification = clientCertificateVerification
        return configuration
    }
}
