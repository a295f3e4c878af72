import Logging
import PushlineKafka
import PushlineTestSupport
import Testing

/// `group.protocol=consumer` (KIP-848): the broker assigns partitions, so the classic protocol's
/// client-side settings must not reach librdkafka, which refuses them when it creates the client.
@Suite struct GroupProtocolTests {
    func consumer(_ properties: [String: String]) -> KafkaConsumerConfiguration {
        // Port 9 (discard) on loopback: nothing listens, and creating a consumer needs no broker.
        KafkaConsumerConfiguration(bootstrapServers: "127.0.0.1:9", groupID: "g", topics: ["t"], properties: properties)
    }

    @Test func theClassicProtocolKeepsTheWorkersAssignmentStrategy() throws {
        let properties = try consumer(["group.protocol": "classic"]).librdkafkaProperties()
        #expect(properties["partition.assignment.strategy"] == "roundrobin")
        #expect(!consumer(["group.protocol": "classic"]).usesConsumerGroupProtocol)
    }

    @Test func theConsumerProtocolGetsNoClassicOnlyProperty() throws {
        let configuration = consumer(["group.protocol": "consumer", "group.remote.assignor": "uniform"])
        let properties = try configuration.librdkafkaProperties()
        #expect(configuration.usesConsumerGroupProtocol)
        for name in KafkaConsumerConfiguration.classicOnlyProperties {
            #expect(properties[name] == nil, "\(name) must not reach librdkafka")
        }
        #expect(properties["group.protocol"] == "consumer")
        #expect(properties["group.remote.assignor"] == "uniform")
        #expect(properties["enable.auto.offset.store"] == "false", "the offset design's settings stay")
    }

    /// The derived configuration against librdkafka's mock cluster, which implements
    /// `ConsumerGroupHeartbeat` (the embedded broker does not): the member subscribes and the
    /// broker hands it every partition of the topic.
    @Test(.timeLimit(.minutes(1))) func librdkafkaAcceptsTheDerivedConfigurationAndSubscribes() async throws {
        let cluster = try MockCluster()
        cluster.createTopic("kip848", partitions: 4)
        let consumer = try KafkaConsumer(
            configuration: KafkaConsumerConfiguration(
                bootstrapServers: cluster.bootstrapServers,
                groupID: "kip848-group",
                topics: ["kip848"],
                properties: ["group.protocol": "consumer", "group.remote.assignor": "range"]
            ),
            logger: Logger(label: "test")
        )
        try await waitUntil("the member owns the topic's 4 partitions", timeout: .seconds(30)) { consumer.assignment.count == 4 }
        #expect(Set(consumer.assignment.map(\.partition)) == [0, 1, 2, 3])
        await consumer.close(drainTimeout: .seconds(1))
    }

    @Test func classicOnlySettingsAreRefusedWithTheConsumerProtocolNamingEach() {
        let configuration = consumer([
            "group.protocol": "consumer", "partition.assignment.strategy": "cooperative-sticky",
            "session.timeout.ms": "6000", "heartbeat.interval.ms": "1000",
        ])
        #expect(configuration.problems().count == 3)
        #expect {
            try configuration.librdkafkaProperties()
        } throws: { error in
            let error = error as! KafkaError
            return Set(error.properties) == ["partition.assignment.strategy", "session.timeout.ms", "heartbeat.interval.ms"]
                && error.message.contains("group.protocol=consumer")
        }
    }

    @Test func theRemoteAssignorIsOnlyForTheConsumerProtocolAndKnown() {
        #expect {
            try consumer(["group.remote.assignor": "uniform"]).librdkafkaProperties()
        } throws: { error in
            (error as! KafkaError).properties == ["group.remote.assignor"]
        }
        #expect {
            try consumer(["group.protocol": "consumer", "group.remote.assignor": "sticky"]).librdkafkaProperties()
        } throws: { error in
            (error as! KafkaError).properties == ["group.remote.assignor"]
        }
        #expect {
            try consumer(["group.protocol": "next"]).librdkafkaProperties()
        } throws: { error in
            (error as! KafkaError).properties == ["group.protocol"]
        }
    }
}
