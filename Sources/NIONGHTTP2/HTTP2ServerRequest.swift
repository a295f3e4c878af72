import NIOCore

/// A complete request received by a server connection (headers and body both ended).
/// `headers` excludes pseudo-headers, which are split out; `neverIndex` tells how the client
/// encoded each header.
public struct HTTP2ServerRequest: Sendable {
    public var streamID: Int32
    public var method: String
    public var scheme: String
    public var authority: String
    public var path: String
    public var headers: [HTTP2Header]
    public var body: ByteBuffer?
    /// Whether the client sent `:path` as never-indexed.
    public var pathNeverIndexed: Bool

    public init(
        streamID: Int32, method: String = "", scheme: String = "", authority: String = "", path: String = "",
        headers: [HTTP2Header] = [], body: ByteBuffer? = nil, pathNeverIndexed: Bool = false
    ) {
        self.streamID = streamID
        self.method = method
        self.scheme = scheme
        self.authority = authority
        self.path = path
        self.headers = headers
        self.body = body
        self.pathNeverIndexed = pathNeverIndexed
    }
}
