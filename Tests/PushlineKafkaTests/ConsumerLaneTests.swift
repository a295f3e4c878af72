import PushlineKafka
import PushlineTestSupport
import Testing

/// The priority lane against the embedded broker: its records come through their own stream,
/// whatever the bulk lane's state.
@Suite(.serialized, .timeLimit(.minutes(2))) struct ConsumerLaneTests {
    @Test func priorityRecordsArriveWhileTheBulkLaneIsPausedAndUnread() async throws {
        let broker = try await EmbeddedBroker()
        defer { broker.stop() }
        let (bulk, urgent) = ("jobs-bulk", "jobs-urgent")
        try await broker.createTopic(bulk, partitions: 2)
        try await broker.createTopic(urgent, partitions: 1)
        var configuration = Integration.consumerConfiguration(broker, group: "g-lanes", topic: bulk)
        configuration.topics = [bulk, urgent]
        configuration.priorityTopics = [urgent]
        configuration.maxBufferedRecords = 100
        let consumer = try KafkaConsumer(configuration: configuration, logger: Integration.logger)
        try await waitUntil("assigned all three partitions", timeout: .seconds(60)) { consumer.assignment.count == 3 }

        // A bulk backlog nobody reads (the buffer fills), and the bulk lane paused on top.
        _ = try await Integration.produce(broker, topic: bulk, count: 2000)
        consumer.pause()
        let urgentEnds = try await Integration.produce(broker, topic: urgent, count: 20)
        let received = Locked<[KafkaRecord]>([])
        let reader = Task {
            for try await event in consumer.priorityRecords {
                if case .records(let records) = event {
                    received.withLock { $0.append(contentsOf: records) }
                    for record in records { consumer.complete(record.id) }
                }
            }
        }
        try await waitUntil("every urgent record arrives", timeout: .seconds(30)) { received.withLock { $0.count } >= 20 }
        let records = received.withLock { $0 }
        #expect(records.allSatisfy { $0.topic == urgent })
        #expect(Set(records.map(\.offset)) == Set(0..<(urgentEnds[0] ?? 0)))
        // The bulk lane delivered at most its buffer, unread, and nothing came through the wrong stream.
        #expect(consumer.inFlightCount - records.count <= 100 + configuration.maxBatchSize)
        await consumer.close(drainTimeout: .zero)
        _ = try await reader.value
    }
}
