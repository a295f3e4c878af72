/// A produced record that was not delivered, as librdkafka handed it back in the delivery report:
/// what a sender needs to produce it again, so that it does not have to keep every record it
/// produced until its report (`KafkaDelivery.undelivered`).
public struct UndeliveredRecord: Sendable, Hashable {
    public var topic: String
    public var key: [UInt8]?
    public var value: [UInt8]

    public init(topic: String, key: [UInt8]?, value: [UInt8]) {
        self.topic = topic
        self.key = key
        self.value = value
    }
}
