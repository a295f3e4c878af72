import CRdKafka
import Logging
import Testing

@testable import PushlineKafka

/// Topic handles made once (the producer's `KafkaTopic`) and consumed topics' names known once
/// (`RDKafkaTopicNames`), against librdkafka's in-process mock cluster (no broker process).
@Suite struct TopicHandleTests {
    static func client() throws -> RDKafkaClient {
        var logger = Logger(label: "topic-handles")
        logger.logLevel = .error
        return try RDKafkaClient.make(
            type: RD_KAFKA_PRODUCER,
            properties: ["bootstrap.servers": "mock:9092", "test.mock.num.brokers": "1"],
            logger: logger,
            onStatistics: nil
        )
    }

    @Test func theProducerMakesOneHandlePerTopic() async throws {
        var logger = Logger(label: "topic-handles")
        logger.logLevel = .error
        let producer = try KafkaProducer(
            configuration: KafkaProducerConfiguration(bootstrapServers: "mock:9092", properties: ["test.mock.num.brokers": "1"]),
            logger: logger
        )
        let results = try producer.topic("results.of.a.long.name")
        let again = try producer.topic("results.of.a.long.name")
        let other = try producer.topic("invalidations")
        #expect(results.handle === again.handle)
        #expect(results.handle !== other.handle)
        #expect(results.name == "results.of.a.long.name")
        // A record produced through the handle is delivered to that topic.
        let report = try await producer.send(topic: "results.of.a.long.name", key: nil, value: Array("r".utf8))
        #expect(report.topic == "results.of.a.long.name")
        await producer.close()
    }

    @Test func aTopicsNameIsMadeOnceAndCheckedAgainstItsHandle() throws {
        let client = try Self.client()
        let first = try RDKafkaTopic(client: client, name: "push.jobs.of.a.long.name")
        let second = try RDKafkaTopic(client: client, name: "push.jobs.urgent")
        var names = RDKafkaTopicNames()
        #expect(names.name(of: first.pointer) == "push.jobs.of.a.long.name")
        #expect(names.name(of: first.pointer) == "push.jobs.of.a.long.name")
        #expect(names.name(of: second.pointer) == "push.jobs.urgent")
        #expect(names.name(of: first.pointer) == "push.jobs.of.a.long.name")
        #expect(names.name(of: nil) == "")
    }
}
