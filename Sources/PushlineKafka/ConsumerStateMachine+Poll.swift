extension ConsumerStateMachine {
    /// What the poll thread saw before asking `tick`.
    struct Observation: Sendable {
        var now: ContinuousClock.Instant
        /// Kafka does not answer this member (an outage): a join cannot complete meanwhile.
        var kafkaUnreachable = false
        /// librdkafka considers the assignment lost: its offsets must not be committed.
        var assignmentLost = false
        /// How many records the last look at the bulk queue took (nil: it was not looked at).
        var bulkTaken: Int?
    }

    /// What the poll thread does next.
    enum PollStep: Sendable {
        case poll(PollPlan)
        /// Begin the close protocol (`closeStep`).
        case close
    }

    /// One turn of the poll loop: the actions, then bulk records while the buffer has room, then
    /// the consumer queue (rebalances, logs, priority records) in every state. One of the two
    /// waits, up to `pollInterval`: the bulk queue when it had nothing last time and there is room
    /// (a bulk record then wakes the thread at once), else the consumer queue when the bulk buffer
    /// is full (a reader freeing room wakes it: `read` says so).
    struct PollPlan: Sendable {
        var actions: [ConsumerAction]
        /// How many bulk records to take (0: the bulk buffer is full).
        var bulkRoom: Int
        var bulkWaits: Bool
        /// The consumer queue waits while the bulk buffer is full.
        var consumerWaits: Bool { bulkRoom == 0 }
    }
}
