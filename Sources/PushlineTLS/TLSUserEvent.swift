/// User inbound events fired by `TLSHandler` (`userInboundEventTriggered`).
public enum TLSUserEvent: Sendable, Hashable {
    /// The handshake finished (and, when required, ALPN agreed). Fired once, before any
    /// decrypted data and before writes buffered during the handshake are sent.
    /// `negotiatedProtocol` is the ALPN protocol ("h2"), nil when ALPN is not in use.
    case handshakeCompleted(negotiatedProtocol: String?)
}
