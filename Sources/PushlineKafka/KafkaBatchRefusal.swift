/// A record of a batch that librdkafka did not take (`KafkaProducer.send(batchTo:count:record:)`):
/// its index in the batch and why. No delivery report comes for it.
public struct KafkaBatchRefusal: Sendable {
    public var index: Int
    public var error: KafkaError
}
