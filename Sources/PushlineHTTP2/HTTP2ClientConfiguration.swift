/// Settings of one client connection.
public struct HTTP2ClientConfiguration: Sendable, Hashable {
    /// The peer's SETTINGS_MAX_CONCURRENT_STREAMS assumed until its first SETTINGS arrive.
    /// Default 1: APNs may allow a single stream on a new connection, and a client that opens
    /// more before hearing the real limit risks "Maximum active streams violated".
    public var assumedPeerMaxConcurrentStreams: UInt32 = 1
    /// SETTINGS_INITIAL_WINDOW_SIZE we advertise (per-stream receive window).
    public var initialWindowSize: UInt32 = 1 << 20
    /// Connection-level receive window.
    public var connectionWindowSize: Int32 = 16 << 20

    public init() {}
}
