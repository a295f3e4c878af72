import PushlineTLS

extension TLSContext {
    /// The client context of every connection to `endpoint` with `credential`: TLS 1.2+, ALPN h2,
    /// the system trust store plus `caFile`, and the client certificate of certificate trust.
    /// Shared by the push pool and the channel-management client.
    static func apns(endpoint: APNSEndpoint, caFile: String?, credential: APNSCredential) throws -> TLSContext {
        var tls = TLSConfiguration.client(serverHostname: endpoint.host)
        if let caFile, !caFile.isEmpty {
            tls.trustRoots = .system(plusCAFile: caFile)
        }
        if case .certificate(let identity) = credential {
            tls.identity = identity
        }
        return try TLSContext(configuration: tls)
    }
}
