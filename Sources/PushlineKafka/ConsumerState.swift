/// Where the consumer is in its life, with what each stage needs: the one record of whether a
/// join may be pending, whether a close was asked for (its deadline, and whether librdkafka
/// failed), the close's phases and the end. `ConsumerStateMachine.state` holds it; its
/// transitions are here, the decisions that go with them in the machine.
///
/// Payloads are flags and references (`CloseRequest`, `JoinRound`), so the enum has a fixed
/// layout: `isRunning`, read for every record taken, is a compare.
enum ConsumerState: Sendable, Hashable {
    /// Handing out records. `joinPending`: this member's JoinGroup may be pending at the
    /// coordinator: from the subscription to the first assignment, and from every revoke (after
    /// which librdkafka rejoins) to the next assignment.
    case running(joinPending: Bool)
    /// A close was asked for (or librdkafka raised a fatal error); records are still handed out
    /// until the poll thread's next look begins the close.
    case closeAsked(CloseRequest, joinPending: Bool)
    /// The poll thread began the close: no record is handed out any more.
    case closing(CloseRequest, joinPending: Bool)
    /// Closing: waiting, until `round.until`, for a join round this member is part of to assign
    /// it (a leave sent while its JoinGroup is pending can stall the round for the members that
    /// stay; docs/kafka.md). `joinPending` turns false when the round assigns this member.
    case awaitingJoin(CloseRequest, JoinRound, joinPending: Bool)
    /// Closing: every partition is being revoked; waiting for started records until the close
    /// deadline. No join is waited for any more.
    case draining(CloseRequest)
    /// Closing: the last offsets are committed; the member leaves the group.
    case leaving(CloseRequest)
    /// The member left the group: the executor's close returned.
    case closed

    /// Handing out records (also once a close was asked for, until the poll thread begins it).
    var isRunning: Bool {
        switch self {
        case .running, .closeAsked: true
        default: false
        }
    }

    /// Whether this member's JoinGroup may be pending (false once draining: no join is waited
    /// for then).
    var joinPending: Bool {
        switch self {
        case .running(let pending), .closeAsked(_, let pending), .closing(_, let pending), .awaitingJoin(_, _, let pending):
            pending
        case .draining, .leaving, .closed:
            false
        }
    }

    /// The close asked for, if any (nil also once closed).
    var close: CloseRequest? {
        switch self {
        case .running, .closed: nil
        case .closeAsked(let close, _), .closing(let close, _), .awaitingJoin(let close, _, _), .draining(let close),
            .leaving(let close):
            close
        }
    }

    /// librdkafka raised a fatal error: nothing is committed any more.
    var failed: Bool { close?.failed ?? false }

    var isClosed: Bool {
        if case .closed = self { return true }
        return false
    }

    /// Asks for a close: records already started get until `deadline` (the first request's).
    mutating func requestClose(deadline: ContinuousClock.Instant) {
        if case .running(let pending) = self { self = .closeAsked(CloseRequest(deadline: deadline, failed: false), joinPending: pending) }
    }

    /// librdkafka raised a fatal error: a close at once (or the one asked for, with its deadline),
    /// committing nothing. True the first time.
    mutating func fail(now: ContinuousClock.Instant) -> Bool {
        switch self {
        case .running(let pending):
            self = .closeAsked(CloseRequest(deadline: now, failed: true), joinPending: pending)
        case .closeAsked(let close, let pending):
            guard !close.failed else { return false }
            self = .closeAsked(close.failing, joinPending: pending)
        case .closing(let close, let pending):
            guard !close.failed else { return false }
            self = .closing(close.failing, joinPending: pending)
        case .awaitingJoin(let close, let round, let pending):
            guard !close.failed else { return false }
            self = .awaitingJoin(close.failing, round, joinPending: pending)
        case .draining(let close):
            guard !close.failed else { return false }
            self = .draining(close.failing)
        case .leaving(let close):
            guard !close.failed else { return false }
            self = .leaving(close.failing)
        case .closed:
            return false
        }
        return true
    }

    /// Notes whether this member's join may be pending: false at an assignment; true after a
    /// revoke while running (librdkafka rejoins; a closing member's last revoke is not followed by
    /// a join).
    mutating func setJoinPending(_ pending: Bool) {
        switch self {
        case .running:
            self = .running(joinPending: pending)
        case .closeAsked(let close, _):
            self = .closeAsked(close, joinPending: pending)
        case .closing(let close, _):
            if !pending { self = .closing(close, joinPending: false) }
        case .awaitingJoin(let close, let round, _):
            if !pending { self = .awaitingJoin(close, round, joinPending: false) }
        case .draining, .leaving, .closed:
            break
        }
    }
}
