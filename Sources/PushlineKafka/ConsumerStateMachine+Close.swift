extension ConsumerStateMachine {
    /// The next step of a close.
    enum CloseStep: Sendable {
        /// Keep polling (rebalances and logs; records are dropped) for up to `pollInterval` while
        /// a pending join round may still assign this member, up to `bound` (`starting`: the
        /// first such step).
        case awaitJoin(starting: Bool, bound: Duration)
        /// Perform `actions`; then, when `waitUntil` is set, wait for started records to finish
        /// until then (a completion wakes the wait), and poll once.
        case drain(actions: [ConsumerAction], waitUntil: ContinuousClock.Instant?, joinWait: JoinWait?)
        /// Perform `actions` (the last stores and commit) and leave the group; `unfinished`
        /// records were still started at the deadline (the next owner redoes them).
        case leave(actions: [ConsumerAction], unfinished: Int)
    }

    /// How a close's wait for a join round ended.
    struct JoinWait: Sendable, Hashable {
        var waited: Duration
        /// The round assigned this member (else the wait ran out).
        var completed: Bool
    }
}
