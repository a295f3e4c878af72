/// Decides when this member should give up a join that does not complete and join afresh, as a
/// pure value fed with one observation per look (the poll thread's loop).
///
/// A join is stalled when, for at least `bound`, this member's JoinGroup may be pending
/// (`ConsumerStateMachine.joinPending`), it owns no partition and has no started record, it is not closing,
/// and Kafka answers (in an outage a join cannot complete and a fresh one would not either; the
/// clock restarts when it ends). Then `observe` says `.rejoin` once, and the clock restarts: a
/// join that stalls again is abandoned again one `bound` later. Any other observation (an
/// assignment, a record started, closing) resets it. A zero `bound` never rejoins.
///
/// Why: the embedded broker sometimes never answers a newcomer's JoinGroup although its round
/// completed for the others, and librdkafka waits `max.poll.interval.ms` + 3 s for that answer
/// (docs/kafka.md, "A join that is never answered").
struct StalledJoin: Sendable {
    struct Observation: Sendable {
        var now: ContinuousClock.Instant
        /// This member's JoinGroup may be pending: from the subscription to the first assignment,
        /// and from every revoke to the next assign.
        var joinPending: Bool
        /// Partitions this member owns.
        var owned: Int
        /// Records started and not finished.
        var started: Int
        /// The consumer is closing: it leaves the group, it never rejoins.
        var closing = false
        /// Kafka does not answer this member (an outage, warned about on its own).
        var kafkaUnreachable = false
    }

    enum Action: Sendable, Hashable {
        case wait
        /// Abandon the pending join and join again; it has been pending this long (since the
        /// subscription, the revoke, or the previous rejoin).
        case rejoin(pendingFor: Duration)
    }

    let bound: Duration
    /// Since when the join has been stalled (nil: it is not).
    private(set) var since: ContinuousClock.Instant?
    /// Rejoins since the join last completed (or the member last started work).
    private(set) var rejoins = 0

    init(bound: Duration) {
        self.bound = bound
    }

    mutating func observe(_ observation: Observation) -> Action {
        let now = observation.now
        let stalling =
            observation.joinPending && observation.owned == 0 && observation.started == 0 && !observation.closing
            && !observation.kafkaUnreachable
        guard bound > .zero, stalling else {
            since = nil
            if !observation.joinPending || observation.owned > 0 || observation.started > 0 { rejoins = 0 }
            return .wait
        }
        let began = since ?? now
        since = began
        guard now - began >= bound else { return .wait }
        since = now
        rejoins += 1
        return .rejoin(pendingFor: now - began)
    }
}
