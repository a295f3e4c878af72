/// A consumed record, its bytes copied out of librdkafka (the C message is destroyed at once,
/// so held records never pin librdkafka's fetch buffers).
///
/// Hand `id` back to `KafkaConsumer.complete(_:)` once the record's work is acknowledged.
public struct KafkaRecord: Sendable, Hashable {
    public var id: RecordID
    public var key: [UInt8]?
    public var value: [UInt8]
    public var headers: [KafkaHeader]
    /// Milliseconds since the epoch (create or log-append time), nil when the broker sent none.
    public var timestampMilliseconds: Int64?

    public init(id: RecordID, key: [UInt8]?, value: [UInt8], headers: [KafkaHeader], timestampMilliseconds: Int64?) {
        self.id = id
        self.key = key
        self.value = value
        self.headers = headers
        self.timestampMilliseconds = timestampMilliseconds
    }

    public var topic: String { id.topic }
    public var partition: Int32 { id.partition }
    public var offset: Int64 { id.offset }
}
