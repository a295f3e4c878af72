/// Where a produced record was written.
public struct DeliveryReport: Sendable, Hashable {
    public var topic: String
    public var partition: Int32
    public var offset: Int64
    public var timestampMilliseconds: Int64?

    public init(topic: String, partition: Int32, offset: Int64, timestampMilliseconds: Int64?) {
        self.topic = topic
        self.partition = partition
        self.offset = offset
        self.timestampMilliseconds = timestampMilliseconds
    }
}
