import CRdKafka

/// A producer's handle on one topic (`rd_kafka_topic_t`), made once per topic: a record produced
/// through it names no topic by string, which librdkafka would otherwise look up under its topic
/// lock (and take and drop a reference to) for every record.
///
/// Owns the handle and destroys it in `deinit`; it keeps its client alive until then, since a
/// topic handle must not outlive the `rd_kafka_t` it was made from.
final class RDKafkaTopic: @unchecked Sendable {
    // @unchecked Sendable: immutable; librdkafka's topic handles may be used from any thread.
    let pointer: OpaquePointer
    let name: String
    private let client: RDKafkaClient

    init(client: RDKafkaClient, name: String) throws(KafkaError) {
        // No topic configuration of its own: the client's default topic configuration applies.
        guard let pointer = rd_kafka_topic_new(client.handle, name, nil) else {
            throw KafkaError(rd_kafka_last_error(), message: "cannot make a handle for topic \(name)")
        }
        self.pointer = pointer
        self.name = name
        self.client = client
    }

    deinit {
        rd_kafka_topic_destroy(pointer)
    }
}
