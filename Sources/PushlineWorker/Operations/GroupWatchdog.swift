/// Tells a stuck consumer-group member from a quiet one (issue 27), as a pure value fed with
/// one observation per statistics interval.
///
/// Stuck is either of, for at least `bound` (the worker's: 3 × `session.timeout.ms`) counted
/// while Kafka answers (an outage has its own warning; the clocks restart when it ends):
/// - *no partitions*: the member owns none and its join has not completed (librdkafka's join
///   state is not "steady"): a rebalance that never ends. A member that owns none in a steady
///   group has more members than partitions beside it and is not stuck.
/// - *not committing*: it owns partitions with lag, no app is held (a held app stops work on
///   purpose, and `/readyz` says so already), and the group's committed offsets of those
///   partitions have not moved.
struct GroupWatchdog: Sendable {
    struct Observation: Sendable {
        var now: ContinuousClock.Instant
        /// librdkafka's join state ("steady", "wait-join", ...).
        var joinState: String
        /// Partitions this member owns.
        var owned: Int
        /// The lag of the owned partitions, summed.
        var lag: Int
        /// The committed offsets of the owned partitions, summed (none: 0).
        var committed: Int
        /// Whether an APNs app is held.
        var held: Bool
        /// Whether Kafka does not answer this member (an outage: warned about on its own).
        var kafkaUnreachable = false
    }

    enum Stuck: Sendable, Hashable, CustomStringConvertible {
        case noPartitions(joinState: String, since: ContinuousClock.Instant)
        case notCommitting(lag: Int, since: ContinuousClock.Instant)

        var since: ContinuousClock.Instant {
            switch self {
            case .noPartitions(_, let since), .notCommitting(_, let since): since
            }
        }

        var description: String {
            switch self {
            case .noPartitions(let joinState, _): "owns no partition and its join has not completed (join state \(joinState))"
            case .notCommitting(let lag, _): "owns partitions with lag \(lag) whose committed offsets do not move"
            }
        }
    }

    /// What an observation changed.
    enum Change: Sendable, Hashable {
        case becameStuck(Stuck)
        case recovered
    }

    let bound: Duration
    private(set) var stuck: Stuck?
    private var joiningSince: ContinuousClock.Instant?
    private var stalledSince: ContinuousClock.Instant?
    private var lastCommitted: Int?

    init(bound: Duration) {
        self.bound = bound
    }

    mutating func observe(_ observation: Observation) -> Change? {
        let now = observation.now
        if observation.kafkaUnreachable {
            joiningSince = nil
            stalledSince = nil
            lastCommitted = nil
        } else if observation.owned == 0 && observation.joinState != "steady" {
            joiningSince = joiningSince ?? now
        } else {
            joiningSince = nil
        }
        if observation.kafkaUnreachable {
            // Counted from when Kafka answers again.
        } else if observation.owned > 0 && observation.lag > 0 && !observation.held && observation.committed == lastCommitted {
            stalledSince = stalledSince ?? now
        } else if observation.owned > 0 && observation.lag > 0 && !observation.held {
            // The first look at lagging partitions, or their offsets moved: the clock starts here.
            stalledSince = now
        } else {
            stalledSince = nil
        }
        if !observation.kafkaUnreachable { lastCommitted = observation.committed }

        var found: Stuck?
        if let since = joiningSince, now - since >= bound {
            found = .noPartitions(joinState: observation.joinState, since: since)
        } else if let since = stalledSince, now - since >= bound {
            found = .notCommitting(lag: observation.lag, since: since)
        }
        defer { stuck = found }
        switch (stuck, found) {
        case (nil, let found?): return .becameStuck(found)
        case (_?, nil): return .recovered
        default: return nil
        }
    }
}
