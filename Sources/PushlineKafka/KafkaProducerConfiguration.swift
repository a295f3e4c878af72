/// What a `KafkaProducer` connects to and how it behaves.
///
/// `properties` go to librdkafka as-is and override the defaults (lz4, linger); idempotence and
/// `acks=all` are required for the at-least-once contract and cannot be changed.
public struct KafkaProducerConfiguration: Sendable, Hashable {
    public var bootstrapServers: String
    public var properties: [String: String]
    /// librdkafka's `statistics.interval.ms`; nil = no statistics.
    public var statisticsInterval: Duration?
    /// How long one poll call of the delivery-report thread blocks.
    public var pollInterval: Duration

    public init(
        bootstrapServers: String,
        properties: [String: String] = [:],
        statisticsInterval: Duration? = nil,
        pollInterval: Duration = .milliseconds(100)
    ) {
        self.bootstrapServers = bootstrapServers
        self.properties = properties
        self.statisticsInterval = statisticsInterval
        self.pollInterval = pollInterval
    }

    /// Settings the delivery guarantees rely on; users may repeat them, not change them.
    public static let requiredProperties: [String: String] = [
        "enable.idempotence": "true",
        "acks": "all",
        "log.queue": "true",
    ]

    /// Defaults users may override through `properties`.
    public static let defaultProperties: [String: String] = [
        "compression.type": "lz4",
        // Results are small and many: 20 ms batches cost less CPU (client and broker) than 5 ms
        // ones, and add at most 20 ms before a job's offset may be committed.
        "linger.ms": "20",
        "batch.num.messages": "10000",
        "queue.buffering.max.messages": "500000",
        // The Java client's hash: a key lands in the partition a Java (or Kafka Streams)
        // producer would pick, so keyed results can be co-partitioned with the user's own
        // topics. Also cheaper per record than librdkafka's default CRC-32 (zlib's `crc32` was
        // about 1% of the worker at 1 token per job, two records per job).
        "partitioner": "murmur2_random",
    ]

    /// The complete librdkafka property set, or an error naming every problem.
    public func librdkafkaProperties() throws(KafkaError) -> [String: String] {
        var problems: [(property: String, message: String)] = []
        if bootstrapServers.isEmpty { problems.append(("bootstrap.servers", "must not be empty")) }
        var result = Self.defaultProperties
        if let statisticsInterval {
            result["statistics.interval.ms"] = String(statisticsInterval.milliseconds)
        }
        for (name, value) in properties {
            let canonical = name == "request.required.acks" ? "acks" : name
            if let required = Self.requiredProperties[canonical], required != value,
                !(canonical == "acks" && value == "-1")
            {
                problems.append((name, "must be '\(required)' (at-least-once depends on it), got '\(value)'"))
            }
            result[name] = value
        }
        if let given = properties["bootstrap.servers"], given != bootstrapServers {
            problems.append(("bootstrap.servers", "set twice ('\(bootstrapServers)' and '\(given)'); set it once"))
        }
        result["bootstrap.servers"] = bootstrapServers
        result.merge(Self.requiredProperties) { _, required in required }
        if !problems.isEmpty { throw KafkaError.configuration(problems) }
        return result
    }
}
