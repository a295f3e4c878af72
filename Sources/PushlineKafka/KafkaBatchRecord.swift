/// One record of a batch produced in one call (`KafkaProducer.send(batchTo:count:record:)`): its
/// bytes, which librdkafka copies before the call returns, and the delivery its report goes to.
public struct KafkaBatchRecord {
    /// The record's key (nil: none).
    public var key: UnsafeRawBufferPointer?
    public var value: UnsafeRawBufferPointer
    public var delivery: KafkaDelivery

    public init(key: UnsafeRawBufferPointer?, value: UnsafeRawBufferPointer, delivery: KafkaDelivery) {
        self.key = key
        self.value = value
        self.delivery = delivery
    }
}
