/// A Kafka record header. `value` is nil for a header sent with a null value.
public struct KafkaHeader: Sendable, Hashable {
    public var key: String
    public var value: [UInt8]?

    public init(key: String, value: [UInt8]?) {
        self.key = key
        self.value = value
    }
}
