/// A record's delivery callback, passed to librdkafka as the per-message opaque (retained once
/// at produce time, released by the delivery-report callback or on a failed produce).
final class DeliveryBox: Sendable {
    let topic: String
    let completion: @Sendable (Result<DeliveryReport, KafkaError>) -> Void

    init(topic: String, completion: @escaping @Sendable (Result<DeliveryReport, KafkaError>) -> Void) {
        self.topic = topic
        self.completion = completion
    }
}
