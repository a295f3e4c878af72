/// One of the consumer's two lanes of records: the bulk partitions, and the priority partitions
/// (`KafkaConsumerConfiguration.priorityTopics`), each with its own buffer and its own pause.
enum ConsumerLane: Sendable, Hashable, CustomStringConvertible {
    case bulk
    case priority

    var description: String {
        switch self {
        case .bulk: "bulk"
        case .priority: "priority"
        }
    }
}
