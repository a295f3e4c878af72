import Logging
import PushlineKafka
import Testing

@Suite struct ConfigurationTests {
    func consumer(_ properties: [String: String] = [:], groupID: String = "g", topics: [String] = ["t"]) -> KafkaConsumerConfiguration {
        KafkaConsumerConfiguration(bootstrapServers: "127.0.0.1:9092", groupID: groupID, topics: topics, properties: properties)
    }

    @Test func consumerGetsTheOffsetDesignSettingsAndUserPropertiesAsIs() throws {
        var configuration = consumer(["security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN", "auto.commit.interval.ms": "250"])
        configuration.statisticsInterval = .seconds(5)
        let properties = try configuration.librdkafkaProperties()
        #expect(properties["bootstrap.servers"] == "127.0.0.1:9092")
        #expect(properties["group.id"] == "g")
        #expect(properties["partition.assignment.strategy"] == "roundrobin")
        #expect(properties["enable.auto.offset.store"] == "false")
        #expect(properties["enable.auto.commit"] == "false", "the poll thread commits every commitInterval")
        #expect(properties["security.protocol"] == "SASL_SSL")
        #expect(properties["sasl.mechanism"] == "PLAIN")
        #expect(properties["auto.commit.interval.ms"] == "250")
        #expect(properties["statistics.interval.ms"] == "5000")
        #expect(properties["auto.offset.reset"] == "earliest")
    }

    @Test func prefetchIsBoundedAndRefetchedSoonUnlessTheUserSaysOtherwise() throws {
        let properties = try consumer().librdkafkaProperties()
        #expect(properties["queued.min.messages"] == "2000")
        #expect(properties["queued.max.messages.kbytes"] == "4096")
        #expect(properties["fetch.max.bytes"] == "1048576")
        // The runtime under test is Confluent's current librdkafka (2.2.0 added the setting).
        #expect(LibrdkafkaVersion.runtime >= LibrdkafkaVersion(hex: 0x0202_00ff))
        #expect(properties["fetch.queue.backoff.ms"] == "10", "librdkafka's 1 s backoff starved a busy worker")
        let overridden = try consumer(["fetch.queue.backoff.ms": "1000", "queued.min.messages": "100000"]).librdkafkaProperties()
        #expect(overridden["fetch.queue.backoff.ms"] == "1000")
        #expect(overridden["queued.min.messages"] == "100000")
    }

    @Test func eitherRebalanceProtocolIsAcceptedButNotAMix() throws {
        for strategy in ["roundrobin", "range", "cooperative-sticky"] {
            #expect(
                try consumer(["partition.assignment.strategy": strategy]).librdkafkaProperties()["partition.assignment.strategy"]
                    == strategy
            )
        }
        #expect(throws: KafkaError.self) {
            try consumer(["partition.assignment.strategy": "roundrobin,cooperative-sticky"]).librdkafkaProperties()
        }
    }

    @Test func consumerReportsEveryProblemAtOnceNamingEachProperty() {
        let configuration = consumer(
            ["enable.auto.offset.store": "true", "partition.assignment.strategy": "sticky", "max.poll.interval.ms": "5000"],
            groupID: ""
        )
        #expect {
            try configuration.librdkafkaProperties()
        } throws: { error in
            let error = error as! KafkaError
            return Set(error.properties) == [
                "group.id", "enable.auto.offset.store", "partition.assignment.strategy", "max.poll.interval.ms",
            ] && error.code == .invalidArgument && error.message.contains("enable.auto.offset.store")
        }
    }

    @Test func librdkafkaRejectionsNameTheProperty() {
        let configuration = consumer(["no.such.property": "1", "session.timeout.ms": "soon"])
        #expect {
            _ = try KafkaConsumer(configuration: configuration, logger: Logger(label: "test"))
        } throws: { error in
            let error = error as! KafkaError
            return Set(error.properties) == ["no.such.property", "session.timeout.ms"]
                && error.message.contains("no.such.property") && error.message.contains("session.timeout.ms")
        }
    }

    @Test func producerIsIdempotentWithAllAcksAndLz4ByDefault() throws {
        let properties = try KafkaProducerConfiguration(bootstrapServers: "b:1", properties: ["linger.ms": "50"]).librdkafkaProperties()
        #expect(properties["enable.idempotence"] == "true")
        #expect(properties["acks"] == "all")
        #expect(properties["compression.type"] == "lz4")
        #expect(properties["linger.ms"] == "50")
        #expect(try KafkaProducerConfiguration(bootstrapServers: "b:1").librdkafkaProperties()["linger.ms"] == "20")
        #expect(throws: KafkaError.self) {
            try KafkaProducerConfiguration(bootstrapServers: "b:1", properties: ["acks": "1"]).librdkafkaProperties()
        }
        #expect(throws: KafkaError.self) {
            try KafkaProducerConfiguration(bootstrapServers: "b:1", properties: ["enable.idempotence": "false"]).librdkafkaProperties()
        }
    }
}
