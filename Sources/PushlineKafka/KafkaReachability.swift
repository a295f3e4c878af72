/// Whether Kafka answers a client, and what to say about it: one warning when it stops
/// answering, one line when it answers again, and in between a reminder at most every
/// `reminderInterval` (only while failures keep coming). A pure value, fed with the client's
/// failures (all brokers down, transport errors, commits waiting for a coordinator) and
/// successes (a delivery, a commit, a fetched record, an assignment).
public struct KafkaReachability: Sendable {
    /// What to log after an observation.
    public enum Report: Sendable, Hashable {
        /// Kafka stopped answering.
        case unreachable
        /// Still not answering after `since`.
        case stillUnreachable(since: Duration)
        /// Answering again after `after` without.
        case reachable(after: Duration)
    }

    public let reminderInterval: Duration
    /// Since when Kafka has not answered; nil while it does.
    public private(set) var unreachableSince: ContinuousClock.Instant?
    private var lastReport: ContinuousClock.Instant?
    /// The last failure seen, reachable or not since.
    public private(set) var lastFailure: ContinuousClock.Instant?

    public init(reminderInterval: Duration = .seconds(30)) {
        self.reminderInterval = reminderInterval
    }

    public var isUnreachable: Bool { unreachableSince != nil }

    /// A failure to reach Kafka at `now`.
    public mutating func failed(at now: ContinuousClock.Instant) -> Report? {
        lastFailure = now
        guard let since = unreachableSince, let last = lastReport else {
            unreachableSince = now
            lastReport = now
            return .unreachable
        }
        guard now - last >= reminderInterval else { return nil }
        lastReport = now
        return .stillUnreachable(since: now - since)
    }

    /// Whether Kafka is unreachable and failures still come (the last within `window`): an
    /// outage under way, not one failure long ago with no success since (a member with nothing
    /// to fetch or commit may see no success for a long time).
    public func failingRecently(at now: ContinuousClock.Instant, within window: Duration) -> Bool {
        guard isUnreachable, let lastFailure else { return false }
        return now - lastFailure <= window
    }

    /// Kafka answered at `now`.
    public mutating func succeeded(at now: ContinuousClock.Instant) -> Report? {
        guard let since = unreachableSince else { return nil }
        unreachableSince = nil
        lastReport = nil
        return .reachable(after: now - since)
    }
}
