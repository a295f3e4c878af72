/// A delivery that calls a closure.
final class ClosureDelivery: KafkaDelivery, @unchecked Sendable {
    private let completion: @Sendable (Result<DeliveryReport, KafkaError>) -> Void

    init(topic: String, completion: @escaping @Sendable (Result<DeliveryReport, KafkaError>) -> Void) {
        self.completion = completion
        super.init(topic: topic)
    }

    override func delivered(_ result: Result<DeliveryReport, KafkaError>) {
        completion(result)
    }
}
