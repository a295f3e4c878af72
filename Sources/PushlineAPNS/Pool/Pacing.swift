import PushlineAPNSCore

/// The pool's pace (`PoolStateMachine.Settings.maxRate`) as a value: a pacing token per request
/// handed to a connection, and whether the last hand-out stopped for want of one (the pool then
/// asks for a tick when the next token is due). No I/O, no clock: every call gets `now`.
struct Pacing {
    enum State {
        /// No pace: requests leave as fast as the streams allow.
        case unpaced
        /// Paced, and the last hand-out did not run out of tokens.
        case open(TokenBucket)
        /// The last hand-out stopped for want of a token: a tick is needed when the next is due.
        case pacedOut(TokenBucket)
    }

    private(set) var state: State

    /// `rate` requests per second at most (nil: unpaced).
    init(rate: Int?, now: MonotonicInstant) {
        state = rate.map { .open(TokenBucket(rate: $0, now: now)) } ?? .unpaced
    }

    /// A new hand-out starts: whether it runs out of tokens is decided afresh.
    mutating func handOutStarts() {
        if case .pacedOut(let bucket) = state { state = .open(bucket) }
    }

    /// Takes a pacing token for the next hand-out: true when the pool is not paced or one is
    /// there; false (and paced out until the next hand-out) when the pace says wait. Called only
    /// once a connection has room, so a full pool does not burn tokens.
    mutating func take(now: MonotonicInstant) -> Bool {
        switch state {
        case .unpaced:
            return true
        case .open(var bucket):
            let took = bucket.take(now: now)
            state = took ? .open(bucket) : .pacedOut(bucket)
            return took
        case .pacedOut(var bucket):
            let took = bucket.take(now: now)
            state = .pacedOut(bucket)
            return took
        }
    }

    /// When the next token is due, if the last hand-out ran out of them (nil otherwise).
    mutating func tickWanted(now: MonotonicInstant) -> MonotonicInstant? {
        guard case .pacedOut(var bucket) = state else { return nil }
        let at = bucket.nextTokenAt(now: now)
        state = .pacedOut(bucket)
        return at
    }
}
