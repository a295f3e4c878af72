extension ConsumerStateMachine {
    /// How a revoke waits for the revoked partitions' started records.
    struct RevokeDrain: Sendable {
        /// When it stops waiting: `revokeDrainTimeout` from the revoke, or the close deadline.
        var deadline: ContinuousClock.Instant
        /// Records started when the revoke began.
        var started: Int
        /// The generations the partitions' records were handed out under.
        var generations: [UInt64]
    }
}
