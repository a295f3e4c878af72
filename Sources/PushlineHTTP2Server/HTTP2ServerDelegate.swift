import PushlineHTTP2

/// Receives complete requests and connection events of one `HTTP2ServerHandler`, on the
/// channel's EventLoop and never from inside nghttp2, so it may respond, reset, send GOAWAY or
/// close from any method. The handler passed in is the per-connection context: its controls and
/// stats belong to that connection. The handler holds its delegate strongly until it is removed;
/// a delegate should not hold the handler strongly.
public protocol HTTP2ServerDelegate: AnyObject {
    /// A request arrived complete. Respond now or later with `connection.respond(to:...)`.
    func http2Server(_ connection: HTTP2ServerHandler, didReceive request: HTTP2ServerRequest)
    /// A stream closed (answered, reset, refused, or above a GOAWAY we sent).
    func http2Server(_ connection: HTTP2ServerHandler, streamClosed streamID: Int32, errorCode: HTTP2ErrorCode)
    /// The client opened a stream beyond our acknowledged limit (nghttp2 then ends the connection
    /// with GOAWAY PROTOCOL_ERROR).
    func http2ServerLimitViolated(_ connection: HTTP2ServerHandler)
    func http2Server(_ connection: HTTP2ServerHandler, goAwayReceived goAway: HTTP2GoAway)
    func http2Server(_ connection: HTTP2ServerHandler, goAwaySent goAway: HTTP2GoAway)
    /// The client reset a stream (RST_STREAM), e.g. a request it gave up on. `streamClosed`
    /// follows for a stream that was open.
    func http2Server(_ connection: HTTP2ServerHandler, resetReceived streamID: Int32, errorCode: HTTP2ErrorCode)
    func http2ServerClosed(_ connection: HTTP2ServerHandler)
}

extension HTTP2ServerDelegate {
    public func http2Server(_ connection: HTTP2ServerHandler, streamClosed streamID: Int32, errorCode: HTTP2ErrorCode) {}
    public func http2ServerLimitViolated(_ connection: HTTP2ServerHandler) {}
    public func http2Server(_ connection: HTTP2ServerHandler, goAwayReceived goAway: HTTP2GoAway) {}
    public func http2Server(_ connection: HTTP2ServerHandler, goAwaySent goAway: HTTP2GoAway) {}
    public func http2Server(_ connection: HTTP2ServerHandler, resetReceived streamID: Int32, errorCode: HTTP2ErrorCode) {}
    public func http2ServerClosed(_ connection: HTTP2ServerHandler) {}
}
