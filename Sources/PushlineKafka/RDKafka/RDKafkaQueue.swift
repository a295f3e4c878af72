import CRdKafka

/// Owns one application queue of a consumer (`rd_kafka_queue_new`) and destroys it in deinit.
///
/// The bulk partitions' fetch queues are forwarded here, so the poll thread takes their records
/// only when its buffer has room while it keeps polling the consumer queue (rebalances, logs,
/// priority records) in every state. The client is retained: the queue must go before it.
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

    /// Up to `capacity` messages, each handed to `body` and destroyed right after. Waits up to
    /// `timeout` milliseconds for the first one only (returning as soon as it comes).
    @discardableResult
    func consume(upTo capacity: Int, timeout: Int32 = 0, _ body: (UnsafeMutablePointer<rd_kafka_message_t>) -> Void) -> Int {
        guard capacity > 0 else { return 0 }
        var first = 0
        if timeout > 0 {
            guard let message = rd_kafka_consume_queue(pointer, timeout) else { return 0 }
            body(message)
            rd_kafka_message_destroy(message)
            first = 1
            guard capacity > 1 else { return 1 }
        }
        let capacity = capacity - first
        if messages.count < capacity { messages = Array(repeating: nil, count: capacity) }
        let count = rd_kafka_consume_batch_queue(pointer, 0, &messages, capacity)
        guard count > 0 else { return first }
        for index in 0..<count {
            guard let message = messages[index] else { continue }
            body(message)
            rd_kafka_message_destroy(message)
        }
        return first + count
    }

    deinit {
        rd_kafka_queue_destroy(pointer)
    }
}
