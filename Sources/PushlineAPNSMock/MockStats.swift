import Synchronization

/// What the mock has seen: counts by status and reason, connections, and stream-limit discipline.
///
/// Shared by every event loop, so it is a `Mutex`-guarded value. The per-request counts (answers,
/// and the 200s among them) are kept per connection in `ConnectionCounters` instead — atomics only
/// that connection's loop writes — and added in when a snapshot is taken, so a request takes no
/// lock and does no dictionary work. Other answers are rare enough to go through the lock.
public final class MockStats: Sendable {
    public struct Snapshot: Sendable, Hashable {
        public var requests = 0
        public var byStatus: [Int: Int] = [:]
        public var byReason: [String: Int] = [:]
        public var connections = 0
        public var openConnections = 0
        /// The most streams ever open at once on any one connection.
        public var maxOpenStreams = 0
        /// Streams a client opened above the limit it had been told.
        public var limitViolations = 0
        /// The most streams open at once on a token connection before its first success (APNs
        /// allows one).
        public var maxOpenStreamsWhileProbing = 0
        /// Answered requests per connection number.
        public var requestsByConnection: [Int: Int] = [:]
        /// The highest limit ever advertised.
        public var maxAdvertisedLimit = 0
        /// GOAWAYs the mock's chaos or idle timer sent (`--goaway-every`, `--idle-close-seconds`).
        public var goawaysSent = 0
        /// GOAWAYs clients sent: a client that closes politely sends one per connection.
        public var goawaysReceived = 0
        /// RST_STREAM frames clients sent (requests they gave up on).
        public var clientResets = 0
        /// GOAWAY INTERNAL_ERROR sent by nghttp2's RST_STREAM rate limit (`--reset-rate-limit`).
        public var resetLimitGoaways = 0
        /// Connections ended with GOAWAY PROTOCOL_ERROR for a `--protocol-error-token` request.
        public var protocolErrorGoaways = 0
        public var abruptCloses = 0
        public var refusedStreams = 0
        /// Connections whose client offered no ALPN (APNs serves them; Pushy, for one, offers none).
        public var connectionsWithoutALPN = 0
        /// Provider tokens whose ES256 signature was DER rather than raw r||s (APNs accepts both).
        public var derSignedTokens = 0
        /// Broadcasts answered (`POST /4/broadcasts/apps/…`, whatever the answer), and among
        /// them the ones delivered (200).
        public var broadcasts = 0
        public var broadcastsDelivered = 0
        /// Channel-management requests answered, channels created and deleted, and channels
        /// that exist now (over all apps).
        public var channelRequests = 0
        public var channelsCreated = 0
        public var channelsDeleted = 0
        public var channels = 0
        /// Requests answered by the timed outage (`MockConfiguration.outageSeconds`).
        public var outageAnswers = 0
        /// When the outage window opened and when it closes, in unix seconds; nil until it opens.
        public var outageStartedAt: Double?
        public var outageEndsAt: Double?
        /// Seconds since the mock started.
        public var uptimeSeconds = 0.0
    }

    /// One connection's answered requests and, among them, the 200s without a reason.
    final class ConnectionCounters: Sendable {
        let connection: Int
        let answered = Atomic<Int>(0)
        let succeeded = Atomic<Int>(0)
        let resetsReceived = Atomic<Int>(0)

        init(connection: Int) { self.connection = connection }

        /// Adds these counts to `snapshot`.
        func add(to snapshot: inout Snapshot) {
            let answered = answered.load(ordering: .acquiring)
            let succeeded = succeeded.load(ordering: .acquiring)
            if answered > 0 {
                snapshot.requests += answered
                snapshot.requestsByConnection[connection, default: 0] += answered
            }
            if succeeded > 0 { snapshot.byStatus[200, default: 0] += succeeded }
            snapshot.clientResets += resetsReceived.load(ordering: .acquiring)
        }
    }

    private struct State {
        var totals = Snapshot()
        /// Counters of open connections, by connection number; folded into `totals` on close.
        var live: [Int: ConnectionCounters] = [:]
    }

    private let state = Mutex(State())
    private let started = ContinuousClock.now

    public init() {}

    public func snapshot() -> Snapshot {
        var snapshot = state.withLock { state in
            var snapshot = state.totals
            for counters in state.live.values { counters.add(to: &snapshot) }
            return snapshot
        }
        let elapsed = ContinuousClock.now - started
        snapshot.uptimeSeconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return snapshot
    }

    func answered(status: Int, reason: String?, counters: ConnectionCounters) {
        counters.answered.wrappingAdd(1, ordering: .releasing)
        if status == 200, reason == nil {
            counters.succeeded.wrappingAdd(1, ordering: .releasing)
            return
        }
        state.withLock {
            $0.totals.byStatus[status, default: 0] += 1
            if let reason { $0.totals.byReason[reason, default: 0] += 1 }
        }
    }

    /// Counts a new connection; its per-request counts go to the returned counters.
    func connectionOpened(_ connection: Int) -> ConnectionCounters {
        let counters = ConnectionCounters(connection: connection)
        state.withLock {
            $0.totals.connections += 1
            $0.totals.openConnections += 1
            $0.live[connection] = counters
        }
        return counters
    }

    func connectionClosed(_ connection: Int) {
        state.withLock {
            $0.totals.openConnections -= 1
            let counters = $0.live.removeValue(forKey: connection)
            counters?.add(to: &$0.totals)
        }
    }

    func streamsOpen(_ count: Int, limit: Int) {
        state.withLock {
            if count > $0.totals.maxOpenStreams { $0.totals.maxOpenStreams = count }
        }
    }

    func streamsOpenWhileProbing(_ count: Int) {
        state.withLock {
            if count > $0.totals.maxOpenStreamsWhileProbing { $0.totals.maxOpenStreamsWhileProbing = count }
        }
    }

    func limitViolated() {
        state.withLock { $0.totals.limitViolations += 1 }
    }

    func advertised(limit: Int) {
        state.withLock { $0.totals.maxAdvertisedLimit = max($0.totals.maxAdvertisedLimit, limit) }
    }

    func protocolErrorGoAway() {
        state.withLock { $0.totals.protocolErrorGoaways += 1 }
    }

    func goawaySent() {
        state.withLock { $0.totals.goawaysSent += 1 }
    }

    func goawayReceived() {
        state.withLock { $0.totals.goawaysReceived += 1 }
    }

    func resetLimitGoAway() {
        state.withLock { $0.totals.resetLimitGoaways += 1 }
    }

    func abruptClose() {
        state.withLock { $0.totals.abruptCloses += 1 }
    }

    /// Counts an answer of the timed outage (also counted by `answered`).
    func outageAnswered() {
        state.withLock { $0.totals.outageAnswers += 1 }
    }

    /// Records that the outage window opened at `startedAt` and closes at `endsAt` (unix seconds).
    func outageStarted(at startedAt: Double, endsAt: Double) {
        state.withLock {
            $0.totals.outageStartedAt = startedAt
            $0.totals.outageEndsAt = endsAt
        }
    }

    func streamRefused() {
        state.withLock { $0.totals.refusedStreams += 1 }
    }

    /// Counts an answered broadcast (also counted by `answered`).
    func broadcastAnswered(status: Int) {
        state.withLock {
            $0.totals.broadcasts += 1
            if status == 200 { $0.totals.broadcastsDelivered += 1 }
        }
    }

    /// Counts an answered channel-management request (also counted by `answered`); `channels` is
    /// how many exist now.
    func channelRequestAnswered(created: Bool, deleted: Bool, channels: Int) {
        state.withLock {
            $0.totals.channelRequests += 1
            if created { $0.totals.channelsCreated += 1 }
            if deleted { $0.totals.channelsDeleted += 1 }
            $0.totals.channels = channels
        }
    }

    func connectionWithoutALPN() {
        state.withLock { $0.totals.connectionsWithoutALPN += 1 }
    }

    func derSignedToken() {
        state.withLock { $0.totals.derSignedTokens += 1 }
    }
}

extension MockStats.Snapshot {
    /// The JSON of `--stats-file` (keys per the contract, plus a few more).
    public func json() -> String {
        func object<K: Comparable>(_ dictionary: [K: Int], key: (K) -> String) -> String {
            "{" + dictionary.sorted { $0.key < $1.key }.map { "\"\(key($0.key))\":\($0.value)" }.joined(separator: ",") + "}"
        }
        func number(_ value: Double?) -> String {
            value.map { String(Double(Int64(($0 * 1000).rounded())) / 1000) } ?? "null"
        }
        let rate = uptimeSeconds > 0 ? Double(requests) / uptimeSeconds : 0
        return "{\"requests\":\(requests),"
            + "\"by_status\":\(object(byStatus) { String($0) }),"
            + "\"by_reason\":\(object(byReason) { $0 }),"
            + "\"connections\":\(connections),"
            + "\"open_connections\":\(openConnections),"
            + "\"max_open_streams\":\(maxOpenStreams),"
            + "\"max_advertised_limit\":\(maxAdvertisedLimit),"
            + "\"max_open_streams_while_probing\":\(maxOpenStreamsWhileProbing),"
            + "\"limit_violations\":\(limitViolations),"
            + "\"goaways_sent\":\(goawaysSent),"
            + "\"goaways_received\":\(goawaysReceived),"
            + "\"client_resets\":\(clientResets),"
            + "\"reset_limit_goaways\":\(resetLimitGoaways),"
            + "\"protocol_error_goaways\":\(protocolErrorGoaways),"
            + "\"abrupt_closes\":\(abruptCloses),"
            + "\"refused_streams\":\(refusedStreams),"
            + "\"connections_without_alpn\":\(connectionsWithoutALPN),"
            + "\"der_signed_tokens\":\(derSignedTokens),"
            + "\"broadcasts\":\(broadcasts),"
            + "\"broadcasts_delivered\":\(broadcastsDelivered),"
            + "\"channel_requests\":\(channelRequests),"
            + "\"channels_created\":\(channelsCreated),"
            + "\"channels_deleted\":\(channelsDeleted),"
            + "\"channels\":\(channels),"
            + "\"outage_answers\":\(outageAnswers),"
            + "\"outage_started_at\":\(number(outageStartedAt)),"
            + "\"outage_ends_at\":\(number(outageEndsAt)),"
            + "\"uptime_seconds\":\(Int(uptimeSeconds)),"
            + "\"requests_per_second\":\(Int(rate))}"
    }
}
