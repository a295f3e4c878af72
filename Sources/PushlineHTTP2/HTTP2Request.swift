import NIOCore

/// A request a client submits on one stream: pseudo-headers, regular headers, optional body.
///
/// `:path` is sent never-indexed unless `indexPath` is set (APNs paths carry a device token and are
/// never reused), and so is `:authority` unless `indexAuthority` is set (APNs asks for every header
/// but a few to be literals without indexing: its HPACK table is small). `:method` and `:scheme`
/// come from the static table. Regular headers carry their own indexing choice.
public struct HTTP2Request: Sendable {
    public var method: String
    public var scheme: String
    public var authority: String
    public var path: String
    /// Sent right after `path`, as part of `:path` (empty by default): a caller whose paths are a
    /// fixed prefix and a per-request part (APNs' `/3/device/` and a token) need not build each one.
    public var pathSuffix: String
    public var indexPath: Bool
    public var indexAuthority: Bool
    public var headers: [HTTP2Header]
    public var body: ByteBuffer?

    public init(
        method: String = "POST",
        scheme: String = "https",
        authority: String,
        path: String,
        pathSuffix: String = "",
        indexPath: Bool = false,
        indexAuthority: Bool = false,
        headers: [HTTP2Header] = [],
        body: ByteBuffer? = nil
    ) {
        self.method = method
        self.scheme = scheme
        self.authority = authority
        self.path = path
        self.pathSuffix = pathSuffix
        self.indexPath = indexPath
        self.indexAuthority = indexAuthority
        self.headers = headers
        self.body = body
    }
}
