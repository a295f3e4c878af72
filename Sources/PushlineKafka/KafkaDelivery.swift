/// What a produced record's delivery report goes to: passed to librdkafka as the record's opaque
/// (retained once at produce time, released after `delivered` runs, or when the produce fails).
///
/// Subclass it when a record's report needs state of its own: the subclass is then the one object
/// a record costs, where a closure would cost a context and a box. `send(..., onDelivery:)` wraps
/// a closure in one. `delivered` runs on the producer's poll thread.
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
}
