import PushlineKafka

/// One produce attempt of a result record, as the object librdkafka hands back with its delivery
/// report: the record (to retry it) and who is told once it is safe. One allocation per attempt,
/// where a closure would cost a context and a box.
final class PublishedRecord: KafkaDelivery, @unchecked Sendable {
    // @unchecked Sendable: both fields are immutable, and the object is handed to the poll thread
    // once, at produce time.
    private let publisher: ResultPublisher
    let pending: ResultPublisher.Pending

    init(_ pending: ResultPublisher.Pending, publisher: ResultPublisher) {
        self.publisher = publisher
        self.pending = pending
        super.init(topic: pending.record.topic.name)
    }

    override func delivered(_ result: Result<DeliveryReport, KafkaError>) {
        publisher.reportArrived()
        switch result {
        case .success:
            pending.acknowledged()
        case .failure(let error):
            publisher.failed(pending, error: error)
        }
    }
}
