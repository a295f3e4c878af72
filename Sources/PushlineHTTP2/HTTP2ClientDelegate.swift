import NIOCore

/// Connection-level events of an `HTTP2ClientHandler`, called on the channel's EventLoop, never
/// from inside nghttp2 (so a delegate may submit, cancel or close from any of them).
/// Every method has an empty default.
public protocol HTTP2ClientDelegate: AnyObject {
    /// The peer's SETTINGS_MAX_CONCURRENT_STREAMS took a new value (also on its first SETTINGS).
    func http2Client(_ client: HTTP2ClientHandler, peerMaxConcurrentStreamsChanged value: Int)
    /// A stream submitted with `submit(tag:body:writeHeaders:)` ended: its response, or why it has none.
    /// Called once per such stream, in the order the streams ended.
    func http2Client(_ client: HTTP2ClientHandler, completed tag: HTTP2StreamTag, result: Result<HTTP2Response, HTTP2StreamError>)
    /// Streams finished in the last read or write batch (after their completions were delivered).
    /// `availableStreams` may still be zero (after GOAWAY, say).
    func http2ClientStreamsFinished(_ client: HTTP2ClientHandler)
    /// The server sent GOAWAY: stop submitting; unanswered streams above `lastStreamID` fail as unprocessed.
    func http2Client(_ client: HTTP2ClientHandler, goAwayReceived goAway: HTTP2GoAway)
    /// This side sent GOAWAY.
    func http2Client(_ client: HTTP2ClientHandler, goAwaySent goAway: HTTP2GoAway)
    /// The connection closed; every stream has been failed already.
    func http2ClientClosed(_ client: HTTP2ClientHandler)
}

extension HTTP2ClientDelegate {
    public func http2Client(_ client: HTTP2ClientHandler, peerMaxConcurrentStreamsChanged value: Int) {}
    public func http2Client(_ client: HTTP2ClientHandler, completed tag: HTTP2StreamTag, result: Result<HTTP2Response, HTTP2StreamError>) {}
    public func http2ClientStreamsFinished(_ client: HTTP2ClientHandler) {}
    public func http2Client(_ client: HTTP2ClientHandler, goAwayReceived goAway: HTTP2GoAway) {}
    public func http2Client(_ client: HTTP2ClientHandler, goAwaySent goAway: HTTP2GoAway) {}
    public func http2ClientClosed(_ client: HTTP2ClientHandler) {}
}
