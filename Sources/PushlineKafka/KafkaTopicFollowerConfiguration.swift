/// What a `KafkaTopicFollower` reads and how.
public struct KafkaTopicFollowerConfiguration: Sendable, Hashable {
    public var bootstrapServers: String
    public var topic: String
    /// Passed to librdkafka as-is (security settings); group settings are dropped (the follower
    /// is in no group) and the follower's own (`requiredProperties`) win.
    public var properties: [String: String]
    /// How long one poll waits: the delay before a new record is seen at most, beside the broker's.
    public var pollInterval: Duration
    /// When set, a missing topic is created with this many partitions and these topic configs.
    public var creation: Creation?
    /// How often a topic that is missing (and cannot be created) is looked for again.
    public var retryInterval: Duration

    public struct Creation: Sendable, Hashable {
        public var partitions: Int32
        public var configs: [String: String]

        public init(partitions: Int32, configs: [String: String]) {
            self.partitions = partitions
            self.configs = configs
        }
    }

    public init(
        bootstrapServers: String,
        topic: String,
        properties: [String: String] = [:],
        pollInterval: Duration = .milliseconds(100),
        creation: Creation? = nil,
        retryInterval: Duration = .seconds(5)
    ) {
        self.bootstrapServers = bootstrapServers
        self.topic = topic
        self.properties = properties
        self.pollInterval = pollInterval
        self.creation = creation
        self.retryInterval = retryInterval
    }

    /// Settings the follower relies on: no group, no commits, ends of partitions reported (how
    /// it knows it read the whole topic), logs served by its polls, and a broker that answers a
    /// fetch within 100 ms even when nothing is new (a broker that holds a fetch for its whole
    /// wait would otherwise delay a new record by librdkafka's default 500 ms, whatever the
    /// jobs consumer's `fetch.wait.max.ms`).
    public static let requiredProperties: [String: String] = [
        "fetch.wait.max.ms": "100",
        "enable.auto.commit": "false",
        "enable.auto.offset.store": "false",
        "enable.partition.eof": "true",
        "log.queue": "true",
        "auto.offset.reset": "earliest",
    ]

    /// Group settings a follower must not carry (it joins no group).
    static let groupProperties: Set<String> = [
        "group.id", "group.instance.id", "group.protocol", "group.remote.assignor", "partition.assignment.strategy",
        "session.timeout.ms", "heartbeat.interval.ms", "max.poll.interval.ms", "auto.commit.interval.ms",
    ]

    /// The librdkafka properties of the follower's client.
    var librdkafkaProperties: [String: String] {
        var result = properties.filter { !Self.groupProperties.contains($0.key) }
        result["bootstrap.servers"] = bootstrapServers
        // librdkafka assigns partitions only in a consumer with a group id; the follower never joins
        // the group nor commits to it, so any name does.
        result["group.id"] = topic + ".follower"
        result.merge(Self.requiredProperties) { _, required in required }
        return result
    }
}
