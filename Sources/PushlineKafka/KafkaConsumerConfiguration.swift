/// What a `KafkaConsumer` connects to and how it behaves.
///
/// `properties` go to librdkafka as-is (security.protocol, sasl.*, ssl.*, session.timeout.ms, ...);
/// they override this type's defaults, but not the few settings the offset design depends on
/// (see `requiredProperties`), which are rejected with an error naming the property.
public struct KafkaConsumerConfiguration: Sendable, Hashable {
    public var bootstrapServers: String
    public var groupID: String
    public var topics: [String]
    /// Topics of `topics` whose records form the priority lane: they come through
    /// `KafkaConsumer.priorityRecords`, never behind bulk records, and are not paused by `pause()`.
    public var priorityTopics: Set<String>
    public var properties: [String: String]
    /// librdkafka's `statistics.interval.ms`; nil = no statistics.
    public var statisticsInterval: Duration?
    /// How long a revoke (or close) waits for in-flight records of the revoked partitions.
    /// Must stay well below `max.poll.interval.ms`, since the poll thread waits in the callback.
    public var revokeDrainTimeout: Duration
    /// At most this many records per `.records` event.
    public var maxBatchSize: Int
    /// Fetching pauses while this many delivered records wait unread in `events`.
    public var maxBufferedRecords: Int
    /// How long one poll call blocks when no bulk record is waiting; also the latency of
    /// `pause()`/`resume()`, offset stores and a bulk record arriving at an idle consumer.
    public var pollInterval: Duration
    /// How often stored offsets are committed (synchronously, by the poll thread): the bound on
    /// completed work a crash makes the group redo.
    public var commitInterval: Duration
    /// How long `close` waits, still polling, for a join round this member is part of (right
    /// after an eager revoke, or before its first assignment) to hand it its assignment before it
    /// leaves: a LeaveGroup sent while the member's JoinGroup is pending stalls the embedded
    /// broker's group (docs/kafka.md, "Leaving during a rebalance"). Zero (the default): leave at
    /// once, which Apache Kafka handles (a LeaveGroup removes the member from the round); set it
    /// for brokers that do not (docs/kafka.md, "Broker guards").
    public var closeJoinWait: Duration
    /// How long this member's join may stay pending while it owns no partition and has no started
    /// record before the consumer abandons it and joins afresh, with a warning ("rejoining: join
    /// pending for N ms with no assignment"): a coordinator that never answers a JoinGroup would
    /// otherwise leave the member idle for `max.poll.interval.ms` (docs/kafka.md, "A join that is
    /// never answered"). Keep it well above a normal round, which waits for every member's revoke
    /// drain or a dead member's session timeout: the worker sets 2 × `session.timeout.ms` +
    /// `revokeDrainTimeout` when `kafka.guard_join_rounds` is on. Zero (the default): never, as
    /// Apache Kafka answers every JoinGroup (docs/kafka.md, "Broker guards"). Not used with
    /// `group.protocol=consumer`, which has no join rounds.
    public var stalledJoinLimit: Duration
    /// The generation the first assigned partition gets (each assignment takes the next). Two
    /// consumers whose records reach one set of APNs pools (the worker's jobs consumer and its
    /// deferred-topic consumer) start far apart, so that a revoke's `RevokeNotice.generations`
    /// name one consumer's work only.
    public var firstGeneration: UInt64
    /// How long the consumer keeps what it finished on partitions whose assignment was lost (a
    /// Kafka outage longer than `session.timeout.ms`), for their return to this member: a record
    /// fetched again whose results were already in Kafka is completed without being handed out,
    /// and one done in part comes with what was kept (`KafkaRecord.resumed`). docs/kafka.md,
    /// "A lost assignment keeps finished work".
    public var lostRetention: Duration

    public init(
        bootstrapServers: String,
        groupID: String,
        topics: [String],
        priorityTopics: Set<String> = [],
        properties: [String: String] = [:],
        statisticsInterval: Duration? = nil,
        revokeDrainTimeout: Duration = .seconds(10),
        maxBatchSize: Int = 1000,
        maxBufferedRecords: Int = 10_000,
        pollInterval: Duration = .milliseconds(10),
        commitInterval: Duration = .milliseconds(200),
        closeJoinWait: Duration = .zero,
        stalledJoinLimit: Duration = .zero,
        firstGeneration: UInt64 = 1,
        lostRetention: Duration = .seconds(600)
    ) {
        self.bootstrapServers = bootstrapServers
        self.groupID = groupID
        self.topics = topics
        self.priorityTopics = priorityTopics
        self.properties = properties
        self.statisticsInterval = statisticsInterval
        self.revokeDrainTimeout = revokeDrainTimeout
        self.maxBatchSize = maxBatchSize
        self.maxBufferedRecords = maxBufferedRecords
        self.pollInterval = pollInterval
        self.commitInterval = commitInterval
        self.closeJoinWait = closeJoinWait
        self.stalledJoinLimit = stalledJoinLimit
        self.firstGeneration = firstGeneration
        self.lostRetention = lostRetention
    }

    /// How long a lane's buffer stays full before its partitions are paused (not a setting): a
    /// pause purges librdkafka's prefetched messages, so a reader a little behind is waited for.
    static let fullPauseAfter: Duration = .seconds(1)

    /// Settings the offset and rebalance design relies on; users may repeat them, not change them.
    public static let requiredProperties: [String: String] = [
        "enable.auto.offset.store": "false",
        "enable.auto.commit": "false",
        "log.queue": "true",
    ]

    /// Defaults users may override through `properties`. Eager `roundrobin` assignment: a
    /// newcomer owns partitions after one join round instead of cooperative-sticky's two (on the
    /// embedded broker 4-6 s against 11 s), and the stop-the-world it costs is one revoke drain,
    /// which the worker's time-bounded queue keeps short (docs/kafka.md). `cooperative-sticky`
    /// works too.
    public static let defaultProperties: [String: String] = [
        "partition.assignment.strategy": "roundrobin",
        "auto.offset.reset": "earliest",
        "max.poll.interval.ms": "300000",
        "enable.partition.eof": "false",
        // Prefetch. librdkafka's defaults (100,000 records and 64 MiB per partition, since the
        // worker gives each bulk partition a queue of its own, and 50 MiB per fetch) let single-token
        // jobs pile up by the hundred thousand: on the bench about 100 MB allocated for records
        // fetched but not yet read. 2,000 records per partition is still 100 ms of work at the
        // worker's full rate on four partitions, and 1 MiB per fetch is 150 jobs of 100 tokens;
        // `fetch.queue.backoff.ms` (below) makes the next fetch follow soon.
        "queued.min.messages": "2000",
        "queued.max.messages.kbytes": "4096",
        "fetch.max.bytes": "1048576",
    ]

    /// The first librdkafka with `fetch.queue.backoff.ms`.
    static let fetchQueueBackoffSince = LibrdkafkaVersion(hex: 0x0202_00ff)

    /// The assignment strategies the rebalance handling supports (one at a time: librdkafka does
    /// not mix eager and cooperative ones).
    public static let assignmentStrategies: Set<String> = ["roundrobin", "range", "cooperative-sticky"]

    /// `group.protocol`: `classic` (the default: the members elect a leader that assigns) or
    /// `consumer` (KIP-848, Kafka 4.0: the broker assigns, incrementally, and keeps the session
    /// timeout and heartbeat interval itself).
    public static let groupProtocols: Set<String> = ["classic", "consumer"]

    /// Properties of the classic protocol that librdkafka refuses with `group.protocol=consumer`
    /// (the broker's `group.consumer.*` settings take their place).
    public static let classicOnlyProperties: [String] = [
        "partition.assignment.strategy", "session.timeout.ms", "heartbeat.interval.ms", "group.protocol.type",
    ]

    /// The consumer protocol's one assignment setting: the broker-side assignor to ask for.
    public static let remoteAssignors: Set<String> = ["uniform", "range"]

    /// The complete librdkafka property set, or an error naming every problem.
    public func librdkafkaProperties() throws(KafkaError) -> [String: String] {
        var problems: [(property: String, message: String)] = []
        if bootstrapServers.isEmpty { problems.append(("bootstrap.servers", "must not be empty")) }
        if groupID.isEmpty { problems.append(("group.id", "must not be empty")) }
        if topics.isEmpty || topics.contains(where: \.isEmpty) {
            problems.append(("topics", "need at least one non-empty topic name"))
        }
        if !priorityTopics.isSubset(of: topics) {
            problems.append(("priorityTopics", "must be among the subscribed topics, got \(priorityTopics.sorted())"))
        }
        if Set(topics).count != topics.count {
            problems.append(("topics", "name a topic once each, got \(topics)"))
        }
        if maxBatchSize < 1 { problems.append(("maxBatchSize", "must be at least 1, is \(maxBatchSize)")) }
        if maxBufferedRecords < 1 {
            problems.append(("maxBufferedRecords", "must be at least 1, is \(maxBufferedRecords)"))
        }
        var result = Self.defaultProperties
        if LibrdkafkaVersion.runtime >= Self.fetchQueueBackoffSince {
            // A partition whose prefetch queue is over those bounds is not fetched again for this
            // long (librdkafka's default: 1 s, during which a busy worker ran dry: 0.5-0.75 s
            // without a record on the bench). librdkafka 2.2.0 added the setting.
            result["fetch.queue.backoff.ms"] = "10"
        }
        if let statisticsInterval {
            result["statistics.interval.ms"] = String(statisticsInterval.milliseconds)
        }
        for (name, value) in properties {
            if let required = Self.requiredProperties[name], required != value {
                problems.append((name, "must be '\(required)' (the offset design depends on it), got '\(value)'"))
            }
            result[name] = value
        }
        for (name, value) in [("bootstrap.servers", bootstrapServers), ("group.id", groupID)] {
            if let given = properties[name], given != value {
                problems.append((name, "set twice ('\(value)' and '\(given)'); set it once"))
            }
            result[name] = value
        }
        result.merge(Self.requiredProperties) { _, required in required }
        problems += groupProtocolProblems(&result)
        if let strategy = result["partition.assignment.strategy"], !Self.assignmentStrategies.contains(strategy) {
            problems.append(
                (
                    "partition.assignment.strategy",
                    "must be one of \(Self.assignmentStrategies.sorted().joined(separator: ", ")) (one strategy), got '\(strategy)'"
                )
            )
        }

        if let text = result["max.poll.interval.ms"] {
            if let maxPoll = Int64(text) {
                let needed = revokeDrainTimeout.milliseconds * 2
                if maxPoll <= needed {
                    problems.append(
                        (
                            "max.poll.interval.ms",
                            "\(maxPoll) must exceed twice revokeDrainTimeout (\(needed) ms): the poll thread waits for in-flight records during a revoke"
                        )
                    )
                }
            }
        }
        if !problems.isEmpty { throw KafkaError.configuration(problems) }
        return result
    }
}

extension KafkaConsumerConfiguration {
    /// Adapts `result` to the chosen `group.protocol` and names what does not fit it. With
    /// `consumer` the worker's own classic default (`partition.assignment.strategy`) is dropped and
    /// the classic-only properties a user set are refused; with `classic`, `group.remote.assignor`
    /// (which only the broker-assigned protocol reads) is.
    fileprivate func groupProtocolProblems(_ result: inout [String: String]) -> [(property: String, message: String)] {
        let groupProtocol = result["group.protocol"] ?? "classic"
        guard Self.groupProtocols.contains(groupProtocol) else {
            return [("group.protocol", "must be 'classic' or 'consumer', got '\(groupProtocol)'")]
        }
        var problems: [(property: String, message: String)] = []
        if groupProtocol == "consumer" {
            result["partition.assignment.strategy"] = properties["partition.assignment.strategy"]
            for name in Self.classicOnlyProperties where properties[name] != nil {
                problems.append(
                    (
                        name,
                        "is a classic-protocol setting, refused with group.protocol=consumer: the broker decides it "
                            + "(group.consumer.* on the broker, group.remote.assignor picks the assignor)"
                    )
                )
            }
            if let assignor = properties["group.remote.assignor"], !Self.remoteAssignors.contains(assignor) {
                problems.append(
                    (
                        "group.remote.assignor",
                        "must be one of \(Self.remoteAssignors.sorted().joined(separator: ", ")), got '\(assignor)'"
                    )
                )
            }
        } else if properties["group.remote.assignor"] != nil {
            problems.append(("group.remote.assignor", "applies only with group.protocol=consumer"))
        }
        return problems
    }

    /// True when the broker assigns partitions (KIP-848): every rebalance is incremental.
    public var usesConsumerGroupProtocol: Bool { properties["group.protocol"] == "consumer" }
}

extension Duration {
    /// Whole milliseconds, rounded down.
    var milliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}
