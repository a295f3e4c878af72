import Foundation
import Logging

/// An idempotent producer (`acks=all`, lz4) whose delivery callbacks run on its own poll thread.
///
/// `send(...)` enqueues without blocking and reports the outcome to a callback; the `async`
/// variant awaits it. `close()` flushes before the client is destroyed.
public final class KafkaProducer: Sendable {
    private let core: ProducerCore

    /// Creates the producer and starts its poll thread.
    /// `onStatistics` gets librdkafka's statistics JSON every `statisticsInterval` (poll thread).
    public init(
        configuration: KafkaProducerConfiguration,
        logger: Logger,
        onStatistics: (@Sendable (String) -> Void)? = nil
    ) throws(KafkaError) {
        let properties = try configuration.librdkafkaProperties()
        LibrdkafkaVersion.logRuntime(to: logger, client: "producer")
        let client = try RDKafkaClient.makeProducer(properties: properties, logger: logger, onStatistics: onStatistics)
        core = ProducerCore(client: client, configuration: configuration, logger: logger)
        core.start()
    }

    /// Enqueues a record; `onDelivery` runs on the poll thread with its partition and offset, or
    /// a typed error. Throws `.queueFull` (retriable) when librdkafka's queue is full, and other
    /// errors for bad arguments or a fatal client; then `onDelivery` is never called.
    public func send(
        topic: String,
        partition: Int32? = nil,
        key: [UInt8]?,
        value: [UInt8],
        headers: [KafkaHeader] = [],
        onDelivery: (@Sendable (Result<DeliveryReport, KafkaError>) -> Void)? = nil
    ) throws(KafkaError) {
        try core.produce(
            topic: topic,
            partition: partition,
            key: key,
            value: value,
            headers: headers,
            delivery: onDelivery.map { ClosureDelivery(topic: topic, completion: $0) }
        )
    }

    /// Enqueues a record on `topic` whose delivery report goes to `delivery` (one delivery may
    /// serve records on several topics); throws like `send(topic:partition:key:value:headers:onDelivery:)`,
    /// and then `delivery` hears nothing of this record.
    public func send(
        topic: String,
        partition: Int32? = nil,
        key: [UInt8]?,
        value: [UInt8],
        headers: [KafkaHeader] = [],
        delivery: KafkaDelivery
    ) throws(KafkaError) {
        try core.produce(
            topic: topic,
            partition: partition,
            key: key,
            value: value,
            headers: headers,
            delivery: delivery
        )
    }

    /// Enqueues a tombstone (`key`, no value: a compacted topic then forgets the key); the
    /// delivery report comes like `send`'s, which throws the same way.
    public func sendTombstone(
        topic: String,
        key: [UInt8],
        onDelivery: (@Sendable (Result<DeliveryReport, KafkaError>) -> Void)? = nil
    ) throws(KafkaError) {
        // No value: a NULL payload, which is what a tombstone is.
        try core.produce(
            topic: topic,
            partition: nil,
            key: key,
            value: nil,
            headers: [],
            delivery: onDelivery.map { ClosureDelivery(topic: topic, completion: $0) }
        )
    }

    /// Creates `topic` (`partitions`, the broker's replication factor, topic `configs`) and waits
    /// up to `timeout`: nil when created, else why not (Kafka's TOPIC_ALREADY_EXISTS, code 36,
    /// when it was there). Blocks: call it off the event loops.
    public func createTopic(_ topic: String, partitions: Int32, configs: [String: String], timeout: Duration) -> KafkaError? {
        core.client.createTopic(topic, partitions: partitions, configs: configs, timeout: timeout)
    }

    /// The topic `name`, resolved once: records sent with `send(to:...)` cost no lookup of the
    /// topic by name. Throws when librdkafka cannot make a handle for it.
    public func topic(_ name: String) throws(KafkaError) -> KafkaTopic {
        try KafkaTopic(handle: core.topic(name))
    }

    /// Enqueues a record on `topic` whose delivery report goes to `delivery`; throws like
    /// `send(topic:partition:key:value:headers:onDelivery:)`, and then `delivery` hears nothing of
    /// this record. The hot path: no lookup of the topic by name.
    public func send(
        to topic: KafkaTopic,
        partition: Int32? = nil,
        key: [UInt8]?,
        value: [UInt8],
        headers: [KafkaHeader] = [],
        delivery: KafkaDelivery
    ) throws(KafkaError) {
        try core.produce(
            topic: topic.handle,
            partition: partition,
            key: key,
            value: value,
            headers: headers,
            delivery: delivery
        )
    }

    /// Enqueues `count` records on `topic` in one call: librdkafka reads its clocks and locks the
    /// topic once for all of them, and copies each key and value before this returns (so they
    /// may live in one buffer the caller reuses). `record(i)` gives record `i`; each record's
    /// report goes to its delivery. Returns the records that were refused, with why (`.queueFull`
    /// is retriable); their deliveries hear nothing of them.
    public func send(batchTo topic: KafkaTopic, count: Int, record: (Int) -> KafkaBatchRecord) -> [KafkaBatchRefusal] {
        core.produce(batchOn: topic.handle, count: count, record: record)
    }

    /// Sends a record and waits for its delivery report. A full queue is retried after the next
    /// delivery reports free room, until the task is cancelled.
    public func send(
        topic: String,
        partition: Int32? = nil,
        key: [UInt8]?,
        value: [UInt8],
        headers: [KafkaHeader] = []
    ) async throws(KafkaError) -> DeliveryReport {
        while true {
            let result: Result<DeliveryReport, KafkaError> = await withCheckedContinuation { waiter in
                do throws(KafkaError) {
                    try send(topic: topic, partition: partition, key: key, value: value, headers: headers) {
                        waiter.resume(returning: $0)
                    }
                } catch {
                    waiter.resume(returning: .failure(error))
                }
            }
            if case .failure(let error) = result, error.code == .queueFull, !Task.isCancelled {
                await waitForQueueRoom()
                continue
            }
            return try result.get()
        }
    }

    /// Returns once delivery reports have freed room in librdkafka's queue (after `.queueFull`),
    /// or at once when the producer is closed. No polling: the poll thread wakes the waiter.
    public func waitForQueueRoom() async {
        await core.waitForRoom()
    }

    /// Waits until every enqueued record is delivered (or failed), serving delivery reports on the
    /// poll thread. Throws `.timedOut` when records remain after `timeout`.
    public func flush(timeout: Duration) async throws(KafkaError) {
        try await core.flush(timeout: timeout).get()
    }

    /// Records enqueued or in flight (not yet reported).
    public var outstandingCount: Int { core.client.outstandingCount }

    /// Flushes up to `timeout`, then stops the poll thread; records still queued are purged and
    /// reported with an error. The producer is unusable afterwards.
    public func close(timeout: Duration = .seconds(10)) async {
        do {
            try await flush(timeout: timeout)
        } catch {
            core.logger.warning("producer close: \(error)")
        }
        await core.stop()
    }

    deinit {
        core.requestStop()
    }
}
