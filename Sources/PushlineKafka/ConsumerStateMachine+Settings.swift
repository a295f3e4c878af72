extension ConsumerStateMachine {
    /// What the machine needs of `KafkaConsumerConfiguration`, and nothing of its own: every value
    /// comes from a configuration (`init(_:)`), so there is one default for each, the
    /// configuration's.
    struct Settings: Sendable {
        var priorityTopics: Set<String>
        var maxBufferedRecords: Int
        var maxBatchSize: Int
        var pollInterval: Duration
        var commitInterval: Duration
        var revokeDrainTimeout: Duration
        /// How long a close waits for a pending join round (zero: it does not).
        var closeJoinWait: Duration
        /// A lane's buffer full this long pauses its partitions. Pausing purges librdkafka's
        /// prefetched messages (they are fetched again on resume), so a reader that is merely a
        /// little behind is waited for instead (the bulk queue keeps its records meanwhile).
        /// Not a setting of the configuration: `KafkaConsumerConfiguration.fullPauseAfter`.
        var fullPauseAfter: Duration
        /// When to abandon a join the coordinator does not answer (zero: never).
        var stalledJoinLimit: Duration
        /// The rebalance protocol when librdkafka cannot say (no group yet): a cooperative
        /// assignment strategy, or the consumer protocol, whose rebalances are all incremental.
        var cooperativeByConfiguration: Bool
        /// The first assigned partition's generation.
        var firstGeneration: UInt64
        /// How long what was finished on a lost partition is kept for its return.
        var lostRetention: Duration
    }
}

extension ConsumerStateMachine.Settings {
    init(_ configuration: KafkaConsumerConfiguration) {
        self.init(
            priorityTopics: configuration.priorityTopics,
            maxBufferedRecords: configuration.maxBufferedRecords,
            maxBatchSize: configuration.maxBatchSize,
            pollInterval: configuration.pollInterval,
            commitInterval: configuration.commitInterval,
            revokeDrainTimeout: configuration.revokeDrainTimeout,
            // The consumer protocol (KIP-848) has no join rounds to wait for or to stall.
            closeJoinWait: configuration.usesConsumerGroupProtocol ? .zero : configuration.closeJoinWait,
            fullPauseAfter: KafkaConsumerConfiguration.fullPauseAfter,
            stalledJoinLimit: configuration.usesConsumerGroupProtocol ? .zero : configuration.stalledJoinLimit,
            cooperativeByConfiguration: configuration.usesConsumerGroupProtocol
                || configuration.properties["partition.assignment.strategy"]?.contains("cooperative") == true,
            firstGeneration: configuration.firstGeneration,
            lostRetention: configuration.lostRetention
        )
    }
}
