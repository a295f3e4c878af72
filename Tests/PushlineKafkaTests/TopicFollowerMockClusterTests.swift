import CRdKafka
import PushlineKafka
import PushlineTestSupport
import Testing

/// How `KafkaTopicFollower` finds its topic, on librdkafka's mock cluster: an existing topic is
/// looked up, never created again. (The mock cluster cannot refuse a CreateTopics as a broker with
/// ACLs does: it has no controller, so every CreateTopics times out; the refusal's state is
/// `TopicFollowerStateTests`'.)
@Suite(.serialized, .timeLimit(.minutes(1))) struct TopicFollowerMockClusterTests {
    /// CreateTopics' API key.
    static let createTopics: Int16 = 19
    static let creation = KafkaTopicFollowerConfiguration.Creation(partitions: 1, configs: ["cleanup.policy": "compact"])

    func follower(_ cluster: MockCluster, topic: String, lines: CapturedLines) throws -> KafkaTopicFollower {
        try KafkaTopicFollower(
            configuration: KafkaTopicFollowerConfiguration(
                bootstrapServers: cluster.bootstrapServers,
                topic: topic,
                creation: Self.creation,
                retryInterval: .milliseconds(500)
            ),
            logger: lines.logger
        ) { _ in }
    }

    /// Every start asked Kafka to create the topic, and a worker that may not create topics
    /// waited out its refusal each time: now the topic is looked up first.
    @Test func anExistingTopicIsReadWithoutAskingToCreateIt() async throws {
        let cluster = try MockCluster()
        cluster.createTopic("control.exists", partitions: 1)
        cluster.failNextRequests(apiKey: Self.createTopics, count: 5, error: RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED)
        let lines = CapturedLines()
        let follower = try follower(cluster, topic: "control.exists", lines: lines)
        defer { follower.stop() }
        let caughtUp = await offThePool { follower.waitUntilCaughtUp(timeout: .seconds(20)) }
        #expect(caughtUp)
        #expect(lines.all.isEmpty, "no create was asked for, so none was refused: \(lines.all)")
    }
}
