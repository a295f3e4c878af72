import CRdKafka
import Logging
import PushlineKafka
import PushlineTestSupport
import Synchronization
import Testing

/// A revoke whose commit the broker refuses (librdkafka's mock cluster refuses every OffsetCommit
/// while a classic group is joining; here it is told to refuse them) says so in its log line: the
/// next owner redoes what completed since the last commit.
@Suite(.serialized, .timeLimit(.minutes(1))) struct RevokeCommitMockClusterTests {
    static let topic = "revoke-commit"

    @Test func aRevokeWhoseCommitIsRefusedSaysItWasNotCommitted() async throws {
        let cluster = try MockCluster()
        cluster.createTopic(Self.topic, partitions: 2)
        let lines = CapturedLines(level: .info)
        let consumer = try KafkaConsumer(
            configuration: KafkaConsumerConfiguration(
                bootstrapServers: cluster.bootstrapServers,
                groupID: "revoke-commit-group",
                topics: [Self.topic],
                properties: ["session.timeout.ms": "6000", "heartbeat.interval.ms": "500"],
                closeJoinWait: .zero
            ),
            logger: lines.logger
        )
        let completed = Mutex(0)
        let reader = Task {
            for try await event in consumer.events {
                guard case .records(let records) = event else { continue }
                for record in records where consumer.start(record.id) {
                    consumer.complete(record.id)
                    completed.withLock { $0 += 1 }
                }
            }
        }
        try await waitUntil("the member owns both partitions", timeout: .seconds(20)) { consumer.assignment.count == 2 }
        // Every commit from now on is refused: the background ones and the revoke's.
        cluster.failNextRequests(apiKey: MockCluster.offsetCommit, count: 200, error: RD_KAFKA_RESP_ERR_REBALANCE_IN_PROGRESS)
        let producer = try KafkaProducer(
            configuration: KafkaProducerConfiguration(bootstrapServers: cluster.bootstrapServers),
            logger: Logger(label: "revoke-commit-producer")
        )
        for index in 0..<10 {
            _ = try await producer.send(topic: Self.topic, partition: Int32(index % 2), key: nil, value: Array("\(index)".utf8))
        }
        await producer.close()
        try await waitUntil("the member completed the 10 records", timeout: .seconds(20)) { completed.withLock { $0 } == 10 }
        await consumer.close(drainTimeout: .seconds(1))
        reader.cancel()
        let revoked = lines.all.filter { $0.contains("rebalance: revoked 2 partitions") }
        #expect(revoked.count == 1, "\(lines.all)")
        #expect(revoked.allSatisfy { $0.contains("committed: no (REBALANCE_IN_PROGRESS)") }, "\(revoked)")
        #expect(lines.contains("commit failed: "), "the refusal itself is a warning: \(lines.all)")
    }
}
