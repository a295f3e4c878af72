import Logging
import PushlineKafka
import PushlineTestSupport
import Synchronization
import Testing

/// A delivery that serves many records gets each undelivered one back from librdkafka's report,
/// with its topic, key and value, so it need not keep them (no broker: nothing is delivered).
@Suite struct UndeliveredRecordTests {
    final class Collector: KafkaDelivery, @unchecked Sendable {
        let undelivered = Mutex<[(KafkaError, UndeliveredRecord)]>([])
        let delivered = Atomic<Int>(0)

        override func delivered(_ result: Result<DeliveryReport, KafkaError>) {
            delivered.wrappingAdd(1, ordering: .relaxed)
        }

        override func undelivered(_ error: KafkaError, record: UndeliveredRecord) {
            undelivered.withLock { $0.append((error, record)) }
        }
    }

    @Test func anUndeliveredRecordComesBackWithItsTopicKeyAndValue() async throws {
        var logger = Logger(label: "producer-undelivered")
        logger.logLevel = .critical
        // Port 1 on loopback: nothing listens, so every record times out undelivered.
        let producer = try KafkaProducer(
            configuration: KafkaProducerConfiguration(
                bootstrapServers: "127.0.0.1:1",
                properties: ["message.timeout.ms": "300"]
            ),
            logger: logger
        )
        let collector = Collector(topic: "first")
        try producer.send(topic: "first", key: Array("k1".utf8), value: Array("v1".utf8), delivery: collector)
        try producer.send(topic: "second", key: nil, value: Array("v2".utf8), delivery: collector)
        try await waitUntil("two reports", timeout: .seconds(20)) {
            collector.undelivered.withLock { $0.count } == 2
        }
        let records = collector.undelivered.withLock { $0.map(\.1) }.sorted { $0.topic < $1.topic }
        #expect(
            records == [
                UndeliveredRecord(topic: "first", key: Array("k1".utf8), value: Array("v1".utf8)),
                UndeliveredRecord(topic: "second", key: nil, value: Array("v2".utf8)),
            ]
        )
        #expect(collector.delivered.load(ordering: .relaxed) == 0, "the failures came through undelivered only")
        await producer.close()
    }
}
