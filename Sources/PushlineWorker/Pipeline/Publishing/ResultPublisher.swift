import Logging
import PushlineAPNSCore
import PushlineKafka
import Synchronization

/// Produces result records and dead-letter copies, and reports each one's acknowledgement.
///
/// A record is never dropped while the worker runs: a full local queue or a failed delivery
/// (broker down longer than `message.timeout.ms`, leader changes, ...) is produced again until
/// Kafka acknowledges it, because a job's offset must not be stored before its results are safe.
/// A full queue is retried after the next delivery report (which frees room), a failed delivery
/// after a backoff (50 ms doubling to 5 s); both by the retry loop that `run` owns
/// (ResultPublisher+Service.swift). The one exception is a dead-letter copy too large for the
/// broker: it is re-sent truncated, with a header saying so.
final class ResultPublisher: Sendable {
    let producer: any ResultProducer
    let logger: Logger
    private let metrics: WorkerMetrics

    /// The most bytes of a rejected record kept in a truncated dead-letter copy.
    static let truncatedDeadLetterBytes = 900_000

    struct Outgoing: Sendable {
        var topic: KafkaTopic
        var key: [UInt8]?
        var value: [UInt8]
        var headers: [KafkaHeader] = []
        var isDeadLetter = false
    }

    /// A record on its way, with the failed deliveries so far.
    struct Pending: Sendable {
        var record: Outgoing
        var failures: Int
        var acknowledged: Acknowledgement
    }

    /// Delivery reports seen so far (each frees room in librdkafka's queue).
    let deliveries = Atomic<UInt64>(0)
    /// Whether a record waits for room: only then does a delivery report signal `changed`.
    private let awaitingRoom = Atomic<Bool>(false)
    private let retries = Mutex(RetryQueue<Pending>())
    /// Set once the service stops: later failures are not retried (their jobs stay uncommitted).
    private let stopped = Atomic<Bool>(false)
    /// Wakes the retry loop: a record to retry, or a delivery report while one waits for room.
    let changed = ChangeSignal()
    /// Each thread's batch (`withBatch`), made on its first run and kept.
    let batches = ThreadBatchSlot()

    init(producer: any ResultProducer, logger: Logger, metrics: WorkerMetrics) {
        self.producer = producer
        self.logger = logger
        self.metrics = metrics
    }

    /// Sends `record`; `acknowledged` runs once, on the producer's poll thread (or the retry loop),
    /// when Kafka has it.
    func publish(_ record: Outgoing, acknowledged: @escaping @Sendable () -> Void) {
        attempt(Pending(record: record, failures: 0, acknowledged: .call(acknowledged)))
    }

    /// Sends a record that `progress` counts (a token's only record, or a `job_done`), written by
    /// `write`: in a run (`withBatch`), straight into the run's batch; otherwise into an array of
    /// its own (`estimate` bytes first), produced now.
    func publish(
        to topic: KafkaTopic,
        key: String?,
        token progress: ResultDelivery,
        estimate: @autoclosure () -> Int,
        write: (inout JSONWriter) -> Void
    ) {
        if let batch = openBatch {
            batch.append(topic: topic, key: key, delivery: progress, value: write)
            appended(to: batch)
            return
        }
        produceNow(
            Outgoing(topic: topic, key: key.map { Array($0.utf8) }, value: JSONWriter.encode(estimate: estimate(), write)),
            token: progress
        )
    }

    /// `progress`'s token has its records published: once they are in librdkafka (at the end of
    /// the open run, where they may still wait in the batch, or now), the progress says what
    /// follows them (`tokensProduced(_:)`: a job's `job_done`), and it is published here.
    func tokenPublished(_ progress: ResultDelivery) {
        if let batch = openBatch {
            batch.afterProduce(progress)
        } else if let following = progress.tokensProduced(1) {
            publish(following, delivery: progress)
        }
    }

    /// Publishes a record that follows a job's token records (`FollowingRecord`), counted by
    /// `progress` like them.
    func publish(_ following: FollowingRecord, delivery progress: ResultDelivery) {
        let summary = following.summary
        publish(to: following.topic, key: following.key, token: progress, estimate: summary.estimate) {
            summary.write(into: &$0)
        }
    }

    private func produceNow(_ record: Outgoing, token progress: ResultDelivery) {
        let seen = deliveries.load(ordering: .sequentiallyConsistent)
        do throws(KafkaError) {
            // The job's progress is the record's delivery: no object per record (it gets the
            // record back from librdkafka's report if it must be sent again).
            try producer.produce(to: record.topic, key: record.key, value: record.value, headers: record.headers, delivery: progress)
        } catch {
            let pending = Pending(record: record, failures: 0, acknowledged: .token(progress))
            guard error.code == .queueFull else {
                failed(pending, error: error)
                return
            }
            waitForRoom([pending], deliveriesSeen: seen)
        }
    }

    /// A record published with `publish(to:key:token:estimate:write:)` was not delivered: it goes
    /// again like any other, now with an object of its own.
    func undelivered(_ record: UndeliveredRecord, delivery progress: ResultDelivery, error: KafkaError) {
        let topic: KafkaTopic
        do throws(KafkaError) {
            // Made when the record was first produced: this finds it.
            topic = try producer.topic(record.topic)
        } catch {
            logger.error("cannot produce a result record again", metadata: ["topic": "\(record.topic)", "error": "\(error)"])
            return
        }
        failed(
            Pending(
                record: Outgoing(topic: topic, key: record.key, value: record.value),
                failures: 0,
                acknowledged: .token(progress)
            ),
            error: error
        )
    }

    var queueDepth: Int { producer.outstandingCount }

    /// Records waiting to be produced again.
    var retryCount: Int { retries.withLock { $0.count } }

    /// Produces `pending` once. Returns the delivery count seen before a full queue refused it
    /// (the record then waits for room), or nil when librdkafka took it or it failed otherwise.
    @discardableResult
    func attempt(_ pending: Pending) -> UInt64? {
        let seen = deliveries.load(ordering: .sequentiallyConsistent)
        let record = pending.record
        do throws(KafkaError) {
            try producer.produce(
                to: record.topic,
                key: record.key,
                value: record.value,
                headers: record.headers,
                delivery: PublishedRecord(pending, publisher: self)
            )
            return nil
        } catch {
            guard error.code == .queueFull else {
                failed(pending, error: error)
                return nil
            }
            waitForRoom([pending], deliveriesSeen: seen)
            return seen
        }
    }

    /// Parks records refused by a full queue until a delivery report comes after `seen`.
    func waitForRoom(_ records: some Collection<Pending>, deliveriesSeen seen: UInt64) {
        guard !records.isEmpty, !stopped.load(ordering: .acquiring) else { return }
        retries.withLock { queue in
            for pending in records { queue.add(pending, waiting: .room(deliveriesSeen: seen)) }
            awaitingRoom.store(true, ordering: .sequentiallyConsistent)
        }
        // A report after `seen` but before the store above did not signal: look again.
        if deliveries.load(ordering: .sequentiallyConsistent) != seen { changed.signal() }
    }

    /// Takes the records that may be produced again now, and when to look again if none may.
    func takeReady(now: MonotonicInstant) -> (ready: [Pending], nextBackoffEnd: MonotonicInstant?) {
        retries.withLock { queue in
            let ready = queue.takeReady(now: now, deliveries: deliveries.load(ordering: .sequentiallyConsistent))
            awaitingRoom.store(queue.isWaitingForRoom, ordering: .sequentiallyConsistent)
            return (ready, queue.nextBackoffEnd)
        }
    }

    /// Stops retrying; returns how many records were still waiting.
    func stop() -> Int {
        stopped.store(true, ordering: .releasing)
        return retries.withLock { $0.removeAll() }
    }

    /// Runs on the poll thread for every delivery report.
    func reportArrived() {
        deliveries.wrappingAdd(1, ordering: .sequentiallyConsistent)
        if awaitingRoom.load(ordering: .sequentiallyConsistent) { changed.signal() }
    }

    func failed(_ pending: Pending, error: KafkaError) {
        let record = pending.record
        if record.isDeadLetter, error.code == .messageTooLarge, record.value.count > Self.truncatedDeadLetterBytes {
            var truncated = pending
            truncated.record.value = Array(record.value.prefix(Self.truncatedDeadLetterBytes))
            truncated.record.headers.append(KafkaHeader(key: "pushline-truncated", value: Array(String(record.value.count).utf8)))
            logger.warning(
                "dead-letter copy too large for the broker; sending it truncated",
                metadata: ["topic": "\(record.topic.name)", "bytes": "\(record.value.count)"]
            )
            attempt(truncated)
            return
        }
        guard !stopped.load(ordering: .acquiring) else { return }
        metrics.produceRetried()
        if pending.failures % 20 == 0 {
            logger.warning(
                "result record not acknowledged; retrying until it is",
                metadata: ["topic": "\(record.topic.name)", "error": "\(error)", "attempt": "\(pending.failures + 1)"]
            )
        }
        var next = pending
        next.failures += 1
        let delay = Duration.milliseconds(min(5000, 50 << min(pending.failures, 7)))
        retries.withLock { $0.add(next, waiting: .backoff(until: MonotonicInstant.now + delay)) }
        changed.signal()
    }
}
