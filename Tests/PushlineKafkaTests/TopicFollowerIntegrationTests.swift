import Foundation
import PushlineKafka
import PushlineTestSupport
import Synchronization
import Testing

/// `KafkaTopicFollower` against the real embedded broker: a whole topic read from its beginning
/// outside any group, then followed; a missing topic created with the configs asked for.
@Suite(.serialized, .timeLimit(.minutes(2))) struct TopicFollowerIntegrationTests {
    /// Produces `value` (nil: a tombstone) under `key` and waits for the acknowledgement.
    func write(_ producer: KafkaProducer, _ topic: String, key: String, value: String?) async throws {
        let result = await withCheckedContinuation { continuation in
            let done: @Sendable (Result<DeliveryReport, KafkaError>) -> Void = { continuation.resume(returning: $0) }
            do throws(KafkaError) {
                if let value {
                    try producer.send(topic: topic, key: Array(key.utf8), value: Array(value.utf8), onDelivery: done)
                } else {
                    try producer.sendTombstone(topic: topic, key: Array(key.utf8), onDelivery: done)
                }
            } catch {
                continuation.resume(returning: .failure(error))
            }
        }
        _ = try result.get()
    }

    @Test func readsWhatWasThereBeforeCaughtUpThenFollowsNewRecordsAndTombstones() async throws {
        let broker = try await EmbeddedBroker()
        defer { broker.stop() }
        let topic = "control-follow"
        try await broker.createTopic(topic, partitions: 3)
        let producer = try KafkaProducer(
            configuration: KafkaProducerConfiguration(bootstrapServers: broker.bootstrapServers),
            logger: Integration.logger
        )
        for index in 0..<5 { try await write(producer, topic, key: "k\(index)", value: "v\(index)") }
        let seen = Mutex<[(key: String, value: String)]>([])
        let follower = try KafkaTopicFollower(
            configuration: KafkaTopicFollowerConfiguration(
                bootstrapServers: broker.bootstrapServers,
                topic: topic,
                properties: broker.clientProperties.merging(["group.id": "ignored"]) { $1 }
            ),
            logger: Integration.logger
        ) { record in
            seen.withLock {
                $0.append((String(decoding: record.key ?? [], as: UTF8.self), String(decoding: record.value, as: UTF8.self)))
            }
        }
        defer { follower.stop() }
        #expect(follower.waitUntilCaughtUp(timeout: .seconds(20)))
        #expect(Set(seen.withLock { $0.map(\.key) }) == ["k0", "k1", "k2", "k3", "k4"], "all five, before caught up")

        try await write(producer, topic, key: "k5", value: "v5")
        try await waitUntil("the new record", timeout: .seconds(5)) { seen.withLock { $0.contains { $0.key == "k5" } } }
        try await write(producer, topic, key: "k1", value: nil)
        try await waitUntil("the tombstone, as an empty value", timeout: .seconds(5)) {
            seen.withLock { $0.contains { $0.key == "k1" && $0.value.isEmpty } }
        }
        await producer.close()
    }

    @Test func aMissingTopicIsCreatedWithItsConfigsAndAnEmptyTopicIsCaughtUpAtOnce() async throws {
        let broker = try await EmbeddedBroker()
        defer { broker.stop() }
        let follower = try KafkaTopicFollower(
            configuration: KafkaTopicFollowerConfiguration(
                bootstrapServers: broker.bootstrapServers,
                topic: "made.control",
                properties: broker.clientProperties,
                creation: .init(partitions: 1, configs: ["cleanup.policy": "compact,delete", "retention.ms": "60000"])
            ),
            logger: Integration.logger
        ) { _ in }
        defer { follower.stop() }
        #expect(follower.waitUntilCaughtUp(timeout: .seconds(20)))
        // Creating it again is refused: it exists.
        await #expect(throws: (any Error).self) { try await broker.createTopic("made.control", partitions: 1) }
    }
}
