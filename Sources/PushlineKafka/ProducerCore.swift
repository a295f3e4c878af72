import Foundation
import Logging
import Synchronization

/// The producer's engine: `produceva` from any thread, and a poll thread that serves delivery
/// reports, logs, errors, statistics and flush requests.
final class ProducerCore: @unchecked Sendable {
    // @unchecked Sendable: the `let`s are immutable; `state` is touched only with `condition`
    // locked; librdkafka's produce call is thread-safe.
    let client: RDKafkaClient
    let configuration: KafkaProducerConfiguration
    let logger: Logger
    private let condition = NSCondition()
    /// Running or stopped, who waits for the stop, the flushes asked for, the tasks waiting for
    /// room (`ProducerState`).
    private var state = ProducerState<CheckedContinuation<Result<Void, KafkaError>, Never>, CheckedContinuation<Void, Never>>()
    /// Each topic's handle, made on first use and kept for the producer's lifetime.
    private let topics = Mutex<[String: RDKafkaTopic]>([:])

    init(client: RDKafkaClient, configuration: KafkaProducerConfiguration, logger: Logger) {
        self.client = client
        self.configuration = configuration
        self.logger = logger
    }

    func start() {
        let thread = Thread { [self] in run() }
        thread.name = "kafka-producer"
        thread.start()
    }

    /// The handle of the topic `name`, made once.
    func topic(_ name: String) throws(KafkaError) -> RDKafkaTopic {
        if let topic = topics.withLock({ $0[name] }) { return topic }
        let made = try RDKafkaTopic(client: client, name: name)
        // Two threads may make one at once: the first stored is kept, the other destroyed.
        return topics.withLock { topics in
            if let existing = topics[name] { return existing }
            topics[name] = made
            return made
        }
    }

    func produce(
        topic name: String,
        partition: Int32?,
        key: [UInt8]?,
        value: [UInt8]?,
        headers: [KafkaHeader],
        delivery: KafkaDelivery?
    ) throws(KafkaError) {
        try produce(topic: topic(name), partition: partition, key: key, value: value, headers: headers, delivery: delivery)
    }

    func produce(
        topic: RDKafkaTopic,
        partition: Int32?,
        key: [UInt8]?,
        value: [UInt8]?,
        headers: [KafkaHeader],
        delivery: KafkaDelivery?
    ) throws(KafkaError) {
        let opaque = delivery.map { Unmanaged.passRetained($0).toOpaque() }
        guard let error = client.produce(topic: topic, partition: partition, key: key, value: value, headers: headers, opaque: opaque)
        else { return }
        // Not enqueued: the delivery callback will never run, so release its delivery here.
        if let opaque { Unmanaged<KafkaDelivery>.fromOpaque(opaque).release() }
        throw refusal(error, topic: topic)
    }

    /// Why librdkafka refused a record on `topic`: the client's fatal error when that is the
    /// cause, and the topic's name in the message.
    private func refusal(_ error: KafkaError, topic: RDKafkaTopic) -> KafkaError {
        var error = error
        if error.code == .fatal, let fatal = client.fatalError() { error = fatal }
        error.message = "\(topic.name): \(error.message)"
        return error
    }

    /// Enqueues `count` records on `topic` in one librdkafka call; `record(i)` gives record `i`
    /// (its delivery is retained until its report). Returns the records librdkafka refused, with
    /// why; their deliveries hear nothing of them.
    func produce(batchOn topic: RDKafkaTopic, count: Int, record: (Int) -> KafkaBatchRecord) -> [KafkaBatchRefusal] {
        let refused = client.produceBatch(topic: topic, count: count) { index in
            let next = record(index)
            return (next.key, next.value, Unmanaged.passRetained(next.delivery).toOpaque())
        }
        return refused.map { refused in
            // Not enqueued: its delivery callback will never run, so release its delivery here.
            if let opaque = refused.opaque { Unmanaged<KafkaDelivery>.fromOpaque(opaque).release() }
            return KafkaBatchRefusal(index: refused.index, error: refusal(refused.error, topic: topic))
        }
    }

    func flush(timeout: Duration) async -> Result<Void, KafkaError> {
        await withCheckedContinuation { waiter in
            condition.lock()
            let queued = state.flush(timeout: timeout, waiter: waiter)
            condition.unlock()
            if !queued {
                waiter.resume(
                    returning: client.outstandingCount == 0
                        ? .success(()) : .failure(KafkaError(code: .destroyed, message: "producer is closed"))
                )
            }
        }
    }

    func requestStop() {
        condition.lock()
        state.requestStop()
        condition.unlock()
    }

    func stop() async {
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            condition.lock()
            let waits = state.stop(waiter: waiter)
            condition.unlock()
            if !waits { waiter.resume() }
        }
    }

    /// Returns after the poll thread next serves delivery reports (each one frees a place in
    /// librdkafka's queue), or at once when the producer has stopped.
    func waitForRoom() async {
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            condition.lock()
            // An empty queue has room; a non-empty one will report (delivered or failed), and the
            // poll thread takes the waiters under this lock after it serves reports, so a report
            // served after this check cannot be missed.
            let waits = state.waitForRoom(waiter: waiter, outstanding: client.outstandingCount)
            condition.unlock()
            if !waits { waiter.resume() }
        }
    }

    private func resumeRoomWaiters() {
        condition.lock()
        let waiters = state.served()
        condition.unlock()
        for waiter in waiters { waiter.resume() }
    }

    private func run() {
        let pollInterval = configuration.pollInterval
        while true {
            condition.lock()
            let turn = state.nextTurn()
            condition.unlock()
            for request in turn.flushes {
                if let error = client.flush(timeout: request.timeout) {
                    request.waiter.resume(returning: .failure(error))
                } else {
                    request.waiter.resume(returning: .success(()))
                }
            }
            if turn.stop { break }
            if client.poll(timeout: pollInterval) > 0 {
                resumeRoomWaiters()
            }
        }
        // Whatever is left will never be delivered by us: purge it so every callback runs (with
        // _PURGE_QUEUE / _PURGE_INFLIGHT) and every KafkaDelivery is released before destroy.
        client.purgeAll()
        _ = client.flush(timeout: .seconds(1))
        condition.lock()
        let ended = state.ended()
        condition.unlock()
        for request in ended.flushes {
            request.waiter.resume(returning: .failure(KafkaError(code: .destroyed, message: "producer is closed")))
        }
        for waiter in ended.stopWaiters { waiter.resume() }
        for waiter in ended.roomWaiters { waiter.resume() }
        logger.info("producer closed")
    }
}
