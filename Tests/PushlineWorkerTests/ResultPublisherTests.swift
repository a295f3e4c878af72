import Logging
import PushlineKafka
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
}
