/// An error from librdkafka or from this wrapper, with librdkafka's error code. Errors are
/// mapped from librdkafka's in RDKafka/KafkaError+RDKafka.swift.
///
/// `isRetriable`: the same operation may succeed if tried again (queue full, timeouts, leader
/// changes). `isFatal`: the client instance is unusable (for example an idempotent producer that
/// lost its guarantees) and must be closed and recreated.
public struct KafkaError: Error, Sendable, Hashable, CustomStringConvertible {
    public var code: Code
    /// What happened, naming the thing (property, topic, partition) where known.
    public var message: String
    public var isRetriable: Bool
    public var isFatal: Bool
    /// For configuration errors: every rejected property name.
    public var properties: [String]

    public init(code: Code, message: String, isRetriable: Bool = false, isFatal: Bool = false, properties: [String] = []) {
        self.code = code
        self.message = message
        self.isRetriable = isRetriable
        self.isFatal = isFatal
        self.properties = properties
    }

    public var description: String {
        "Kafka error \(code.name) (\(code.rawValue)): \(message)"
            + (isFatal ? " [fatal]" : "") + (isRetriable ? " [retriable]" : "")
    }

    static func configuration(_ problems: [(property: String, message: String)]) -> KafkaError {
        KafkaError(
            code: .invalidArgument,
            message: "invalid Kafka configuration: "
                + problems.map { "\($0.property): \($0.message)" }.joined(separator: "; "),
            properties: problems.map(\.property)
        )
    }
}
