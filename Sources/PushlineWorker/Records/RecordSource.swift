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
}
