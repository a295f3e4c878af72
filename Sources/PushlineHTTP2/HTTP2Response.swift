import NIOCore

/// A complete response received on a client stream. `headers` excludes pseudo-headers;
/// `body` is nil when the server sent none.
public struct HTTP2Response: Sendable {
    public var streamID: Int32
    public var status: Int
    public var headers: HTTP2ResponseHeaders
    public var body: ByteBuffer?

    public init(streamID: Int32, status: Int, headers: HTTP2ResponseHeaders = [], body: ByteBuffer? = nil) {
        self.streamID = streamID
        self.status = status
        self.headers = headers
        self.body = body
    }
}
