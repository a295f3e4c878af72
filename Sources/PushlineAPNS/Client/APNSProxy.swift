import PushlineAPNSCore

/// An HTTP proxy that APNs connections tunnel through (HTTP CONNECT). TLS to APNs runs inside the
/// tunnel, end to end: the proxy sees only the CONNECT request and encrypted bytes.
public struct APNSProxy: Sendable, Hashable, CustomStringConvertible {
    public var host: String
    public var port: Int
    /// The `Proxy-Authorization` value (`Basic …`), or nil for a proxy that needs none.
    public var authorization: String?

    public init(host: String, port: Int, authorization: String? = nil) {
        self.host = host
        self.port = port
        self.authorization = authorization
    }

    /// Host and port, never the credentials (for logs).
    public var description: String { HostPort(host: host, port: port).description }
}
