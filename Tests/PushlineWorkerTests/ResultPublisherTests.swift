import Logging
import PushlineKafka
import PushlineTestSupport
import Synchronization
import Testing

@testable import PushlineWorker

/// The publisher against librdkafka's in-process mock cluster (no broker process).
@Suite(.timeLimit(.minutes(1))) struct ResultPublisherTests {
    /// librdkafka's queue holds 5 records; 300 are published at once. Those refused wait for
    /// delivery reports to free room and are all acknowledged, exactly once each.
    @Test func recordsRefusedByAFullQueueAreAllAcknowledged() async throws {
        var logger = Logger(label: "publisher-mock")
        logger.logLevel = .error
        let producer = try KafkaProducer(
            configuration: KafkaProducerConfiguration(
                bootstrapServers: "mock:9092",
                properties: ["test.mock.num.brokers": "1", "queue.buffering.max.messages": "5", "linger.ms": "1"]
            ),
            logger: logger
        )
        let publisher = ResultPublisher(producer: producer, logger: logger, metrics: WorkerMetrics())
        let retries = Task { await publisher.retryLoop() }
        let results = try producer.topic("results")
        let total = 300
        let acknowledged = Mutex<[Int]>([])
        let (done, doneContinuation) = AsyncStream<Void>.makeStream()
        for index in 0..<total {
            publisher.publish(.init(topic: results, key: nil, value: Array("r\(index)".utf8))) {
                let count = acknowledged.withLock {
                    $0.append(index)
                    return $0.count
                }
                if count == total { doneContinuation.finish() }
            }
        }
        for await _ in done {}
        #expect(acknowledged.withLock { $0.sorted() } == Array(0..<total))
        #expect(publisher.retryCount == 0)
        // Only a record that waited for room (or a failed delivery) advances it.
        #expect(publisher.changed.generation > 0, "some records waited for room")
        retries.cancel()
        await retries.value
        #expect(publisher.stop() == 0)
        await producer.close()
    }

    /// A run's records wait until the run ends, then go to librdkafka together: each token's
    /// `tokensProduced(_:)` is asked only once its record is handed over (a job's `job_done` must follow
    /// its deliveries), and every record is acknowledged.
    @Test func aRunProducesItsRecordsWhenItEnds() async throws {
        let (producer, publisher, retries) = try Self.mockPublisher()
        let results = try producer.topic("results")
        let total = 50
        let delivery = CountingDelivery(publisher: publisher) { producer.outstandingCount }
        publisher.withBatch { batch in
            for index in 0..<total {
                publisher.publish(to: results, key: "job", token: delivery, estimate: 8) {
                    $0.raw(Array("r\(index)".utf8)[...])
                }
                batch.afterProduce(delivery)
            }
            // (librdkafka's count includes its own requests, such as the idempotent producer's id.)
            #expect(producer.outstandingCount < total, "nothing produced inside the run")
            #expect(delivery.published.isEmpty)
        }
        // Each token published saw every record of the run produced (outstanding or acknowledged).
        #expect(delivery.published.count == total)
        #expect(delivery.published.allSatisfy { $0 >= total }, "\(delivery.published)")
        try await waitUntil("\(total) acknowledgements", timeout: .seconds(30)) { delivery.acknowledgements == total }
        #expect(publisher.openBatch == nil, "the run is closed")
        retries.cancel()
        await retries.value
        await producer.close()
        #expect(delivery.acknowledgements == total)
    }

    /// A run longer than `batchLimit` produces what it has at the limit instead of holding it all.
    @Test func aLongRunProducesAtTheBatchLimit() async throws {
        let (producer, publisher, retries) = try Self.mockPublisher()
        let results = try producer.topic("results")
        let total = ResultPublisher.batchLimit + 10
        let delivery = CountingDelivery(publisher: publisher) { producer.outstandingCount }
        publisher.withBatch { _ in
            for index in 0..<total {
                publisher.publish(to: results, key: nil, token: delivery, estimate: 8) { $0.raw(Array("r\(index)".utf8)[...]) }
            }
            #expect(producer.outstandingCount + delivery.acknowledgements >= ResultPublisher.batchLimit)
        }
        try await waitUntil("\(total) acknowledgements", timeout: .seconds(30)) { delivery.acknowledgements == total }
        retries.cancel()
        await retries.value
        await producer.close()
    }

    /// librdkafka's queue holds 5 records; one run publishes 300, each with a delivery of its own.
    /// The batch call refuses most of them: they wait for room, and each is acknowledged once.
    @Test func aRunsRecordsRefusedByAFullQueueAreAllAcknowledgedOnce() async throws {
        let (producer, publisher, retries) = try Self.mockPublisher(queue: 5)
        let results = try producer.topic("results")
        let deliveries = (0..<300).map { _ in CountingDelivery(publisher: publisher) { 0 } }
        publisher.withBatch { _ in
            for (index, delivery) in deliveries.enumerated() {
                publisher.publish(to: results, key: nil, token: delivery, estimate: 8) { $0.raw(Array("r\(index)".utf8)[...]) }
            }
        }
        #expect(publisher.retryCount > 0, "the full queue refused some")
        try await waitUntil("every acknowledgement", timeout: .seconds(50)) {
            deliveries.allSatisfy { $0.acknowledgements >= 1 }
        }
        #expect(deliveries.allSatisfy { $0.acknowledgements == 1 })
        #expect(publisher.retryCount == 0)
        retries.cancel()
        await retries.value
        await producer.close()
    }

    private static func mockPublisher(queue: Int? = nil) throws -> (KafkaProducer, ResultPublisher, Task<Void, Never>) {
        var logger = Logger(label: "publisher-mock")
        logger.logLevel = .error
        var properties = ["test.mock.num.brokers": "1", "linger.ms": "1"]
        if let queue { properties["queue.buffering.max.messages"] = String(queue) }
        let producer = try KafkaProducer(
            configuration: KafkaProducerConfiguration(bootstrapServers: "mock:9092", properties: properties),
            logger: logger
        )
        let publisher = ResultPublisher(producer: producer, logger: logger, metrics: WorkerMetrics())
        return (producer, publisher, Task { await publisher.retryLoop() })
    }
}

/// Counts acknowledgements, and for each token published how many records were produced by then
/// (outstanding in librdkafka, or acknowledged).
private final class CountingDelivery: ResultDelivery, @unchecked Sendable {
    private let state = Mutex<(acknowledged: Int, published: [Int])>((0, []))
    private let outstanding: @Sendable () -> Int

    init(publisher: ResultPublisher, outstanding: @escaping @Sendable () -> Int) {
        self.outstanding = outstanding
        super.init(publisher: publisher, topic: "results")
    }

    override func acknowledged() {
        state.withLock { $0.acknowledged += 1 }
    }

    override func tokensProduced(_ count: Int) -> FollowingRecord? {
        let produced = outstanding()
        state.withLock { $0.published.append(contentsOf: repeatElement(produced + $0.acknowledged, count: count)) }
        return nil
    }

    var acknowledgements: Int { state.withLock { $0.acknowledged } }
    var published: [Int] { state.withLock { $0.published } }
}
