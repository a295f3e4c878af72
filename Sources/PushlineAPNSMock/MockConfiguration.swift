import PushlineHTTP2Server

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Everything `pushline mock-apns` can be told: where to listen, whom to trust, how devices behave,
/// and which faults to inject. Chaos is all off by default.
public struct MockConfiguration: Sendable {
    public var host = "127.0.0.1"
    public var port = 2197
    /// Event loops; 0 = one per core.
    public var threads = 0

    /// Server certificate chain and key (PEM).
    public var tlsCertificateFile: String?
    public var tlsKeyFile: String?

    /// Token trust: accepted signing keys by key id. Empty = token auth off.
    public var authKeys: [String: AuthKey] = [:]
    /// Certificate trust: require client certificates signed by this CA (PEM file).
    public var clientCAFile: String?
    /// Allowed apns-topic values; empty = any.
    public var topics: Set<String> = []

    /// SETTINGS_MAX_CONCURRENT_STREAMS once a connection has carried a valid token (or at once
    /// with certificate trust).
    public var maxStreams = 1000

    /// Broadcast channels one app may have (`--max-channels`; Apple's limit is 10,000): creating
    /// one more is answered 400 CannotCreateChannelConfig.
    public var maxChannels = 10_000

    public var unregisteredTokens: Set<String> = []
    /// Also this fraction of all tokens, chosen by hashing the token (stable across runs).
    public var unregisteredFraction = 0.0

    public var latencyMilliseconds = 0
    public var jitterMilliseconds = 0
    public var rate429 = 0.0
    public var rate500 = 0.0
    public var rate503 = 0.0
    /// GOAWAY after N streams on a connection (0 = never).
    public var goawayEvery = 0
    /// Abrupt TCP close after N streams on a connection (0 = never).
    public var closeEvery = 0
    /// Lower MAX_CONCURRENT_STREAMS to 1 for a moment every N streams (0 = never).
    public var limitDropEvery = 0
    /// How long a dropped limit stays at 1, in milliseconds.
    public var limitDropMilliseconds = 200
    /// A request for one of these device tokens ends its connection: GOAWAY PROTOCOL_ERROR (with
    /// its stream as last-stream-id), then the TCP close, every other stream unanswered; as a
    /// server does that cannot accept a request's header block (`--protocol-error-token`).
    public var protocolErrorTokens: Set<String> = []
    /// Close a connection idle this long, in seconds (0 = never).
    public var idleCloseSeconds = 0
    /// nghttp2's guard against rapid reset (`--reset-rate-limit`): RST_STREAM frames a client may
    /// send, as a burst and a refill per second; beyond it the connection gets GOAWAY
    /// INTERNAL_ERROR (`reset_limit_goaways` in the stats). nghttp2's default: 1000, 33/s.
    public var resetRateLimit: HTTP2ResetRateLimit = .nghttp2Default

    /// A timed outage (see `MockOutage`): from the `outageStartAfterRequests`-th request on, every
    /// request it covers (all, or those of `outageTopic` and `outageKeyID`) is answered
    /// `outageStatus` with `{"reason":"<outageReason>"}` for `outageSeconds`, whatever its token or
    /// device; then the mock answers normally again. 0 seconds = no outage.
    public var outageStatus = 503
    public var outageReason = "ServiceUnavailable"
    public var outageSeconds = 0.0
    /// The request (counted from 1, over all connections) whose arrival opens the outage; with a
    /// scope (below), only requests the outage covers are counted.
    public var outageStartAfterRequests = 1
    /// The outage's scope (see `MockOutageScope`): only requests for this app are refused, that is
    /// whose `apns-topic` is this topic or starts with it and a dot (`com.example.b` also covers
    /// `com.example.b.voip`); other requests are answered as if there were no outage. nil = every
    /// topic (`--outage-topic`).
    public var outageTopic: String?
    /// Only requests whose provider token's `kid` is this key id are refused (one of `authKeys`);
    /// nil = every key (`--outage-key-id`). With `outageTopic` too, a request must match both.
    public var outageKeyID: String?

    public var statsFile: String?
    public var statsIntervalSeconds = 5
    public var recordFile: String?
    /// `--unique-ids`: answer every request with an `apns-unique-id` header (a UUID), as APNs'
    /// development environment does.
    public var uniqueIDs = false
    /// A seed for chaos and jitter, so a run can be repeated.
    public var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
    /// The wall clock in unix seconds, for JWT `iat` checks; tests inject their own.
    public var now: @Sendable () -> Int64 = { Int64(time(nil)) }

    /// A key whose JWTs are accepted.
    public struct AuthKey: Sendable, Hashable {
        public var keyID: String
        public var teamID: String
        /// The P-256 public key, PEM.
        public var publicKeyPEM: String

        public init(keyID: String, teamID: String, publicKeyPEM: String) {
            self.keyID = keyID
            self.teamID = teamID
            self.publicKeyPEM = publicKeyPEM
        }
    }

    public init() {}

    /// `--reset-rate-limit`'s default, as the flag takes it: nghttp2's own limit.
    public static var defaultResetRateLimit: String { HTTP2ResetRateLimit.nghttp2Default.description }

    /// Sets `resetRateLimit` from `BURST:PER_SECOND` (e.g. `1000:33`) or `off`.
    public mutating func setResetRateLimit(parsing text: String) throws(MockError) {
        guard let limit = HTTP2ResetRateLimit(parsing: text) else {
            throw MockError("'\(text)' is not BURST:PER_SECOND (e.g. 1000:33; BURST at least 1) or off")
        }
        resetRateLimit = limit
    }

    /// Whether requests must carry a provider token.
    public var tokenAuth: Bool { !authKeys.isEmpty }
}
