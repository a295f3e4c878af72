import Testing

@testable import pushline_mock_kafka

/// `pushline-mock-kafka`'s command line and standard-input commands (the stack's second broker).
@Suite struct MockKafkaToolTests {
    @Test func theDefaultsAreOneBrokerAndNoTopic() throws {
        let options = try MockKafkaOptions(arguments: [])
        #expect(options.brokers == 1)
        #expect(options.topics.isEmpty)
        #expect(options.advertisedPorts.isEmpty)
        #expect(options.consumerSessionTimeoutMilliseconds == nil)
    }

    @Test func everyOptionIsRead() throws {
        let options = try MockKafkaOptions(arguments: [
            "--brokers", "2", "--topic", "jobs:4", "--topic", "dlq", "--advertise", "9001,9002",
            "--consumer-session-timeout-ms", "6000", "--consumer-heartbeat-interval-ms", "1000",
            "--initial-rebalance-delay-ms", "500", "--debug", "mock,cgrp",
        ])
        #expect(options.brokers == 2)
        #expect(options.topics.map(\.name) == ["jobs", "dlq"])
        #expect(options.topics.map(\.partitions) == [4, 1])
        #expect(options.advertisedPorts == [9001, 9002])
        #expect(options.consumerSessionTimeoutMilliseconds == 6000)
        #expect(options.consumerHeartbeatIntervalMilliseconds == 1000)
        #expect(options.initialRebalanceDelayMilliseconds == 500)
        #expect(options.debug == "mock,cgrp")
    }

    @Test(arguments: [
        ["--brokers", "0"], ["--brokers", "17"], ["--brokers"], ["--topic", "jobs:0"], ["--topic", ":4"],
        ["--brokers", "2", "--advertise", "9001"], ["--advertise", "70000"], ["--advertise", "a"],
        ["--consumer-session-timeout-ms", "-1"], ["--listen", "127.0.0.1:9092"],
    ])
    func aWrongCommandLineIsRefusedWithAReason(arguments: [String]) {
        #expect {
            try MockKafkaOptions(arguments: arguments)
        } throws: { error in
            !((error as? MockKafkaUsageError)?.message.isEmpty ?? true)
        }
    }

    @Test func oneAdvertisedPortPerBroker() throws {
        #expect(try MockKafkaOptions(arguments: ["--advertise", "9001"]).advertisedPorts == [9001])
    }

    @Test func topicCommandsAreParsedWithTheirIgnoredConfigs() {
        #expect(MockKafkaCommand(line: "topic jobs 4") == .topic(name: "jobs", partitions: 4, ignoredConfigs: []))
        #expect(
            MockKafkaCommand(line: "topic c 1 cleanup.policy=compact retention.ms=5 ")
                == .topic(name: "c", partitions: 1, ignoredConfigs: ["cleanup.policy", "retention.ms"])
        )
        #expect(MockKafkaCommand(line: "   ") == .empty)
        #expect(MockKafkaCommand(line: " topic jobs ") == .unknown("topic jobs"))
        #expect(MockKafkaCommand(line: "topic jobs 0") == .unknown("topic jobs 0"))
        #expect(MockKafkaCommand(line: "topic c 1 compact") == .unknown("topic c 1 compact"))
    }
}
