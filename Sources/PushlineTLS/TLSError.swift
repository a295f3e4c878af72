/// Why a TLS connection failed. Fired through `errorCaught` by `TLSHandler`, which then closes
/// the channel; thrown by `TLSContext` when a configuration cannot be used.
public enum TLSError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The handshake failed. `verification` is OpenSSL's certificate verification result when
    /// verification was the cause (e.g. "hostname mismatch", "unable to get local issuer certificate").
    case handshakeFailed(verification: String?, OpenSSLErrorStack)
    /// The peer did not agree on an application protocol although one is required
    /// (`TLSConfiguration.requireALPN`): e.g. a server that does not select "h2".
    case alpnNotNegotiated(offered: [String], selected: String?)
    /// Decrypting application data failed (a fatal alert from the peer lands here too,
    /// e.g. "tlsv13 alert certificate required" when a server rejects our certificate after TLS 1.3's handshake).
    case readFailed(OpenSSLErrorStack)
    /// Encrypting application data failed.
    case writeFailed(OpenSSLErrorStack)
    /// Sending close_notify failed.
    case shutdownFailed(OpenSSLErrorStack)
    /// The connection ended (TCP EOF) without the peer's close_notify after the handshake had started:
    /// data may have been truncated.
    case uncleanShutdown
    /// The configuration cannot be used; every problem found is listed.
    case invalidConfiguration([String])

    public var description: String {
        switch self {
        case .handshakeFailed(let verification?, let stack):
            return "TLS handshake failed: certificate verification: \(verification) [\(stack)]"
        case .handshakeFailed(nil, let stack):
            return "TLS handshake failed: \(stack)"
        case .alpnNotNegotiated(let offered, let selected):
            return "TLS peer did not negotiate ALPN \(offered) (selected: \(selected ?? "none")); APNs requires h2"
        case .readFailed(let stack):
            return "TLS read failed: \(stack)"
        case .writeFailed(let stack):
            return "TLS write failed: \(stack)"
        case .shutdownFailed(let stack):
            return "TLS close_notify failed: \(stack)"
        case .uncleanShutdown:
            return "TLS connection closed by the peer without close_notify"
        case .invalidConfiguration(let problems):
            return "invalid TLS configuration: " + problems.joined(separator: "; ")
        }
    }
}
