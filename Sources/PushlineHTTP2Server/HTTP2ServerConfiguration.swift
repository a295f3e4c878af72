/// Settings of one server connection.
public struct HTTP2ServerConfiguration: Sendable, Hashable {
    /// SETTINGS_MAX_CONCURRENT_STREAMS advertised in the first SETTINGS (change it later with
    /// `HTTP2ServerHandler.setMaxConcurrentStreams`).
    public var maxConcurrentStreams: UInt32 = 100
    /// SETTINGS_INITIAL_WINDOW_SIZE we advertise.
    public var initialWindowSize: UInt32 = 1 << 20
    /// Connection-level receive window.
    public var connectionWindowSize: Int32 = 16 << 20
    /// SETTINGS_HEADER_TABLE_SIZE we advertise: the HPACK dynamic table our decoder keeps for
    /// the client's header blocks. nil: not advertised (HPACK's 4,096 bytes).
    public var headerTableSize: UInt32?
    /// The RST_STREAM rate limit nghttp2 applies to the client (see `HTTP2ResetRateLimit`).
    public var resetRateLimit: HTTP2ResetRateLimit = .nghttp2Default

    public init(maxConcurrentStreams: UInt32 = 100) {
        self.maxConcurrentStreams = maxConcurrentStreams
    }
}
