import NIOCore

/// A GOAWAY frame's content, sent or received. Streams with an id above `lastStreamID` were not
/// (or will not be) processed by the side that sent it; APNs puts `{"reason":"..."}` in `debugData`.
public struct HTTP2GoAway: Sendable, Hashable {
    public var lastStreamID: Int32
    public var errorCode: HTTP2ErrorCode
    public var debugData: ByteBuffer

    public init(lastStreamID: Int32, errorCode: HTTP2ErrorCode, debugData: ByteBuffer = ByteBuffer()) {
        self.lastStreamID = lastStreamID
        self.errorCode = errorCode
        self.debugData = debugData
    }

    /// The debug data as text (lossy UTF-8), for logs and reason parsing.
    public var debugText: String { String(buffer: debugData) }
}
