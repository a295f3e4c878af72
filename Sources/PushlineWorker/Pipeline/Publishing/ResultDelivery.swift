import PushlineKafka

/// The delivery of result records that the pipeline counts rather than follows one by one: a
/// job's progress, or a group's. Every record produced with it as its delivery reports here, and
/// each acknowledgement calls `acknowledged()`; a record that was not delivered is produced again
/// by the publisher, still reporting here.
///
/// Subclasses override `acknowledged()` (the producer's poll thread, or the retry loop).
class ResultDelivery: KafkaDelivery, @unchecked Sendable {
    // @unchecked Sendable: `publisher` is immutable; subclasses keep their state atomic or locked.
    let publisher: ResultPublisher

    init(publisher: ResultPublisher, topic: String) {
        self.publisher = publisher
        super.init(topic: topic)
    }

    /// Kafka has one of the records counted here.
    func acknowledged() {
        preconditionFailure("\(type(of: self)) must override acknowledged()")
    }

    /// `count` tokens' records are handed to the producer (`ResultBatch.afterProduce`): what must
    /// follow them, if anything (a job's `job_done`), for the publisher to publish. A delivery
    /// that follows its tokens' publishing overrides this.
    func tokensProduced(_ count: Int) -> FollowingRecord? {
        preconditionFailure("\(type(of: self)) must override tokensProduced(_:) to wait in a batch")
    }

    final override func delivered(_ result: Result<DeliveryReport, KafkaError>) {
        publisher.reportArrived()
        if case .success = result { acknowledged() }
    }

    /// The success path, without a report: only the acknowledgement counts here.
    final override func delivered(partition: Int32, offset: Int64, timestampMilliseconds: Int64?) {
        publisher.reportArrived()
        acknowledged()
    }

    final override func undelivered(_ error: KafkaError, record: UndeliveredRecord) {
        publisher.reportArrived()
        publisher.undelivered(record, delivery: self, error: error)
    }
}
