import Synchronization

/// What the mock has seen: counts by status and reason, connections, and stream-limit discipline.
///
/// Shared by every event loop, so it is a `Mutex`-guarded value; the lock is held for a few
/// increments per request, which is far below the cost of the request itself.
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
        public var goawaysSent = 0
        public var abruptCloses = 0
        public var refusedStreams = 0
        /// Seconds since the mock started.
        public var uptimeSeconds = 0.0
    }

    private let state = Mutex(Snapshot())
    private let started = ContinuousClock.now

    public init() {}

    public func snapshot() -> Snapshot {
        var snapshot = state.withLock { $0 }
        let elapsed = ContinuousClock.now - started
        snapshot.uptimeSeconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return snapshot
    }

    func answered(status: Int, reason: String?, connection: Int) {
        state.withLock {
            $0.requests += 1
            $0.requestsByConnection[connection, default: 0] += 1
            $0.byStatus[status, default: 0] += 1
            if let reason { $0.byReason[reason, default: 0] += 1 }
        }
    }

    func connectionOpened() {
        state.withLock {
            $0.connections += 1
            $0.openConnections += 1
        }
    }

    func connectionClosed() {
        state.withLock { $0.openConnections -= 1 }
    }

    func streamsOpen(_ count: Int, limit: Int) {
        state.withLock {
            if count > $0.maxOpenStreams { $0.maxOpenStreams = count }
        }
    }

    func streamsOpenWhileProbing(_ count: Int) {
        state.withLock {
            if count > $0.maxOpenStreamsWhileProbing { $0.maxOpenStreamsWhileProbing = count }
        }
    }

    func limitViolated() {
        state.withLock { $0.limitViolations += 1 }
    }

    func advertised(limit: Int) {
        state.withLock { $0.maxAdvertisedLimit = max($0.maxAdvertisedLimit, limit) }
    }

    func goawaySent() {
        state.withLock { $0.goawaysSent += 1 }
    }

    func abruptClose() {
        state.withLock { $0.abruptCloses += 1 }
    }

    func streamRefused() {
        state.withLock { $0.refusedStreams += 1 }
    }
}

extension MockStats.Snapshot {
    /// The JSON of `--stats-file` (keys per the contract, plus a few more).
    public func json() -> String {
        func object<K: Comparable>(_ dictionary: [K: Int], key: (K) -> String) -> String {
            "{" + dictionary.sorted { $0.key < $1.key }.map { "\"\(key($0.key))\":\($0.value)" }.joined(separator: ",") + "}"
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
            + "\"abrupt_closes\":\(abruptCloses),"
            + "\"refused_streams\":\(refusedStreams),"
            + "\"uptime_seconds\":\(Int(uptimeSeconds)),"
            + "\"requests_per_second\":\(Int(rate))}"
    }
}
