import PushlineAPNSCore

/// The knobs of one APNs pool (see docs/apns.md).
public struct APNSClientConfiguration: Sendable {
    public var endpoint: APNSEndpoint
    /// An HTTP proxy to tunnel every connection through (CONNECT); nil = connect directly.
    public var proxy: APNSProxy?
    /// Extra trusted CA (PEM) besides the system store; required for custom endpoints.
    public var caFile: String?
    /// HTTP/2 connections, established at start and kept open.
    public var connections: Int
    /// At start, the first connection opens at once and each next one this long after the one
    /// before (Apple asks high-volume providers not to open them all at once); zero: all at once.
    public var connectSpacing: Duration
    /// Resolves the endpoint's host for each new connection; connections spread over its addresses.
    public var resolver: HostResolver
    /// Cap on streams per connection; the server's SETTINGS_MAX_CONCURRENT_STREAMS wins when lower.
    public var maxStreamsPerConnection: Int
    /// Per-request deadline: the stream is reset and the outcome is `timeout`.
    public var requestTimeout: Duration
    public var retryPolicy: RetryPolicy
    /// Requests waiting for a free stream, beyond which sends fail at once as `connection`.
    public var maxQueuedRequests: Int
    /// A PING is sent after this long without one; an unanswered PING closes the connection.
    public var pingInterval: Duration
    public var pingTimeout: Duration
    public var connectTimeout: Duration
    /// A polite close (shutdown, or a connection the pool retires) sends GOAWAY and waits this
    /// long at most for the open streams to end before it closes TCP.
    public var closeTimeout: Duration
    /// Resends after REFUSED_STREAM/GOAWAY do not count as attempts, up to this many per request.
    public var maxFreeResends: Int
    /// Wall clock in unix seconds, for JWT `iat` (tests inject their own).
    public var now: @Sendable () -> Int64
    /// A label for metrics and logs (the app profile's name).
    public var name: String
    /// When systemic answers hold the app, how it probes, and how long a request may stay held
    /// (docs/apns.md, "Systemic faults").
    public var health: AppHealth.Thresholds
    /// Pacing: at most this many requests per second (retries included); nil = unpaced.
    public var maxRate: Int?

    public init(
        endpoint: APNSEndpoint,
        proxy: APNSProxy? = nil,
        caFile: String? = nil,
        connections: Int = 4,
        connectSpacing: Duration = .seconds(1),
        resolver: HostResolver = .system,
        maxStreamsPerConnection: Int = 1000,
        requestTimeout: Duration = .seconds(10),
        retryPolicy: RetryPolicy = RetryPolicy(),
        maxQueuedRequests: Int = 1_000_000,
        pingInterval: Duration = .seconds(60),
        pingTimeout: Duration = .seconds(10),
        connectTimeout: Duration = .seconds(10),
        closeTimeout: Duration = .seconds(5),
        maxFreeResends: Int = 50,
        now: @escaping @Sendable () -> Int64 = APNSClientConfiguration.systemNow,
        name: String = "default",
        health: AppHealth.Thresholds = AppHealth.Thresholds(),
        maxRate: Int? = nil
    ) {
        self.endpoint = endpoint
        self.proxy = proxy
        self.caFile = caFile
        self.connections = max(1, connections)
        self.connectSpacing = max(.zero, connectSpacing)
        self.resolver = resolver
        self.maxStreamsPerConnection = max(1, maxStreamsPerConnection)
        self.requestTimeout = requestTimeout
        self.retryPolicy = retryPolicy
        self.maxQueuedRequests = maxQueuedRequests
        self.pingInterval = pingInterval
        self.pingTimeout = pingTimeout
        self.connectTimeout = connectTimeout
        self.closeTimeout = closeTimeout
        self.maxFreeResends = maxFreeResends
        self.now = now
        self.name = name
        self.health = health
        self.maxRate = maxRate.flatMap { $0 > 0 ? $0 : nil }
    }

    /// The wall clock in unix seconds (CLOCK_REALTIME, a vDSO call: cheap, and it follows NTP
    /// corrections, which a JWT `iat` must).
    @Sendable public static func systemNow() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Int64(spec.tv_sec)
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
