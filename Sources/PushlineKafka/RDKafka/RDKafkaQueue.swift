import CRdKafka

/// Owns one reference to a queue of a consumer and destroys it in deinit: an application queue
/// (`init(client:)`), or the consumer queue (`init(consumerOf:)`).
///
/// The bulk partitions' fetch queues are forwarded to an application queue, so the poll thread
/// takes their records only when its buffer has room while it keeps polling the consumer queue
/// (rebalances, logs, priority records) in every state. The client is retained: the queue must go
/// before it.
final class RDKafkaQueue: @unchecked Sendable {
    // @unchecked Sendable: the pointers are immutable, and the queue (with `messages`) is used from
    // the consumer's poll thread only.
    let pointer: OpaquePointer
    private let client: RDKafkaClient
    /// `consume`'s message array, kept between calls (poll thread only).
    private var messages: [UnsafeMutablePointer<rd_kafka_message_t>?] = []

    init(client: RDKafkaClient) {
        self.client = client
        self.pointer = rd_kafka_queue_new(client.handle)
    }

    /// A reference to the consumer queue, only to wake a poll waiting on it (`wake`); librdkafka
    /// wants it gone before the consumer closes.
    init(consumerOf client: RDKafkaClient) {
        self.client = client
        self.pointer = rd_kafka_queue_get_consumer(client.handle)
    }

    /// Makes a poll waiting on this queue return at once. Any thread.
    func wake() {
        rd_kafka_queue_yield(pointer)
    }

    /// Routes the fetched records of `partitions` into this queue instead of the consumer queue.
    /// librdkafka keeps the routing across fetch restarts (pause, resume, seek) of the partition.
    func takeOver(_ partitions: [TopicPartition]) {
        for topicPartition in partitions {
            guard let queue = rd_kafka_queue_get_partition(client.handle, topicPartition.topic, topicPartition.partition) else {
                continue
            }
            rd_kafka_queue_forward(queue, pointer)
            // The forwarding holds its own references; ours goes.
            rd_kafka_queue_destroy(queue)
        }
    }

    /// Up to `capacity` messages, each read into `records` (`RDKafkaConsumed.read`), or handed
    /// to `other` when it is not a record, and destroyed right after. Waits up to `timeout`
    /// milliseconds for the first one only (returning as soon as it comes).
    @discardableResult
    func consume(
        upTo capacity: Int,
        timeout: Int32 = 0,
        topicNames: inout RDKafkaTopicNames,
        reader: (any KafkaRecordReader)? = nil,
        into records: inout [KafkaRecord],
        other: (RDKafkaConsumed) -> Void
    ) -> Int {
        guard capacity > 0 else { return 0 }
        var first = 0
        if timeout > 0 {
            guard let message = rd_kafka_consume_queue(pointer, timeout) else { return 0 }
            if let consumed = RDKafkaConsumed.read(message, topicNames: &topicNames, reader: reader, into: &records) {
                other(consumed)
            }
            rd_kafka_message_destroy(message)
            first = 1
            guard capacity > 1 else { return 1 }
        }
        return first
            + takeWaiting(upTo: capacity - first) { message in
                if let consumed = RDKafkaConsumed.read(message, topicNames: &topicNames, reader: reader, into: &records) {
                    other(consumed)
                }
            }
    }

    /// Destroys up to `capacity` waiting messages unread (records nobody takes any more).
    @discardableResult
    func discard(upTo capacity: Int) -> Int {
        takeWaiting(upTo: capacity) { _ in }
    }

    /// Up to `capacity` messages already waiting, each handed to `body` and destroyed right after.
    private func takeWaiting(upTo capacity: Int, _ body: (UnsafeMutablePointer<rd_kafka_message_t>) -> Void) -> Int {
        guard capacity > 0 else { return 0 }
        if messages.count < capacity { messages = Array(repeating: nil, count: capacity) }
        let count = rd_kafka_consume_batch_queue(pointer, 0, &messages, capacity)
        guard count > 0 else { return 0 }
        for index in 0..<count {
            guard let message = messages[index] else { continue }
            body(message)
            rd_kafka_message_destroy(message)
        }
        return count
    }

    deinit {
        rd_kafka_queue_destroy(pointer)
    }
}
