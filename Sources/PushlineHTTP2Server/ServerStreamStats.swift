/// Stream accounting of one server connection, as a value: open streams, the highest number ever
/// open at once, and how often the client opened more streams than we had advertised (and had
/// acknowledged) — counted, not hidden, so a mock can report them.
public struct ServerStreamStats: Sendable, Hashable {
    /// Streams opened by the client and not yet closed.
    public private(set) var openStreams = 0
    /// The most streams open at once on this connection.
    public private(set) var maxOpenStreams = 0
    /// HEADERS that opened a stream beyond our acknowledged SETTINGS_MAX_CONCURRENT_STREAMS.
    public private(set) var limitViolations = 0
    /// Requests delivered complete to the delegate.
    public private(set) var requestsReceived = 0
    /// RST_STREAM frames the client sent (cancelled requests; nghttp2 limits their rate, see
    /// `HTTP2ResetRateLimit`).
    public private(set) var resetsReceived = 0

    public init() {}

    mutating func streamOpened() {
        openStreams += 1
        if openStreams > maxOpenStreams { maxOpenStreams = openStreams }
    }

    mutating func streamClosed() { openStreams -= 1 }

    mutating func requestCompleted() { requestsReceived += 1 }

    mutating func resetReceived() { resetsReceived += 1 }

    /// A new stream was rejected by nghttp2; it is a violation when the limit the client had
    /// acknowledged was already reached (streams refused after we lowered the limit are not).
    mutating func streamRejected(acknowledgedLimit: Int) {
        if openStreams >= acknowledgedLimit { limitViolations += 1 }
    }

    mutating func connectionClosed() { openStreams = 0 }
}
