import PushlineKafka

/// Where a job came from: the Kafka coordinates carried in every result record.
public struct RecordSource: Sendable, Hashable {
    public var topic: String
    public var partition: Int32
    public var offset: Int64

    public init(topic: String, partition: Int32, offset: Int64) {
        self.topic = topic
        self.partition = partition
        self.offset = offset
    }

    /// The coordinates of the consumed record `id`.
    init(_ id: RecordID) {
        self.init(topic: id.topic, partition: id.partition, offset: id.offset)
    }

    /// `topic/partition/offset`: how the `pushline-source` header of a dead-letter or a parked
    /// copy spells the coordinates.
    var coordinates: String { "\(topic)/\(partition)/\(offset)" }

    /// Reads `coordinates`; the topic may hold slashes of its own (Kafka forbids them, but the
    /// last two parts are read from the end). Nil when it is not such a text.
    init?(coordinates text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count >= 3, let offset = Int64(parts[parts.count - 1]), let partition = Int32(parts[parts.count - 2]) else {
            return nil
        }
        let topic = parts[..<(parts.count - 2)].joined(separator: "/")
        guard !topic.isEmpty else { return nil }
        self.init(topic: topic, partition: partition, offset: offset)
    }
}
