/// What a produced record's delivery report goes to: passed to librdkafka as the record's opaque
/// (retained once at produce time, released after `delivered` runs, or when the produce fails).
///
/// Subclass it when a record's report needs state of its own: the subclass is then the one object
/// a record costs, where a closure would cost a context and a box; one delivery may serve many
/// records (each produce retains it once), with `send(topic:...delivery:)` naming each record's
/// topic. `send(..., onDelivery:)` wraps a closure in one. `delivered` and `undelivered` run on
/// the producer's poll thread.
open class KafkaDelivery: @unchecked Sendable {
    // @unchecked Sendable: `topic` is immutable; subclasses must be Sendable in spirit (their
    // state is handed to the poll thread once, at produce time).
    /// The record's topic (delivery reports and error messages name it).
    public let topic: String

    public init(topic: String) {
        self.topic = topic
    }

    /// The record's fate: its partition and offset, or why it was not delivered.
    open func delivered(_ result: Result<DeliveryReport, KafkaError>) {}

    /// The record was delivered. By default, `delivered(.success(report))`; a delivery that only
    /// counts acknowledgements overrides this and skips making the report (its topic is a
    /// string retained and released per record).
    open func delivered(partition: Int32, offset: Int64, timestampMilliseconds: Int64?) {
        delivered(
            .success(DeliveryReport(topic: topic, partition: partition, offset: offset, timestampMilliseconds: timestampMilliseconds))
        )
    }

    /// The record was not delivered: `record` is its topic, key and value as librdkafka had them
    /// (its headers are not kept), for a delivery that serves many records and keeps none of
    /// them. By default, `delivered(.failure(error))`.
    open func undelivered(_ error: KafkaError, record: UndeliveredRecord) {
        delivered(.failure(error))
    }
}
