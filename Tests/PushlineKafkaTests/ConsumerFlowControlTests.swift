import PushlineKafka
import PushlineTestSupport
import Testing

/// Pause/resume and the statistics hook against the embedded broker.
@Suite(.serialized, .timeLimit(.minutes(2))) struct ConsumerFlowControlTests {
    @Test func pausedConsumerFetchesNothingAndResumesWithoutGapsOrDuplicates() async throws {
        let broker = try await EmbeddedBroker()
        defer { broker.stop() }
        let topic = "jobs-pause"
        try await broker.createTopic(topic, partitions: 2)
        var configuration = Integration.consumerConfiguration(broker, group: "g-pause", topic: topic)
        configuration.statisticsInterval = .milliseconds(200)
        let statistics = Locked<[String]>([])
        let probe = try ConsumerProbe(configuration, onStatistics: { json in statistics.withLock { $0.append(json) } })
        try await waitUntil("assigned both partitions", timeout: .seconds(60)) { probe.assigned.count == 2 }
        let before = try await Integration.produce(broker, topic: topic, count: 200)
        try await waitUntil("first records arrive", timeout: .seconds(30)) { probe.recordCount == 200 }

        probe.consumer.pause()
        // The poll thread applies a pause between two polls; statistics are served inside polls,
        // so a few statistics callbacks after pause() prove the loop went round and applied it.
        let statisticsAtPause = statistics.withLock { $0.count }
        try await waitUntil("the poll loop went round after pause()", timeout: .seconds(10)) {
            statistics.withLock { $0.count } >= statisticsAtPause + 3
        }
        let after = try await Integration.produce(broker, topic: topic, count: 300)
        // Absence, shown by progress rather than a sleep: another group reads all 500 records (they
        // are there to fetch), and the paused member's poll loop then goes round a few more times.
        let witness = try ConsumerProbe(Integration.consumerConfiguration(broker, group: "g-pause-witness", topic: topic))
        try await waitUntil("another group reads all 500 records", timeout: .seconds(60)) { witness.recordCount >= 500 }
        let statisticsAtWitness = statistics.withLock { $0.count }
        try await waitUntil("the paused member polls on", timeout: .seconds(10)) {
            statistics.withLock { $0.count } >= statisticsAtWitness + 3
        }
        #expect(probe.recordCount == 200, "records arrived while paused")
        try await witness.close()
        probe.consumer.resume()
        try await waitUntil("records arrive after resume", timeout: .seconds(30)) { probe.recordCount >= 500 }

        let offsets = probe.seen.withLock { $0.records.map { "\($0.partition)/\($0.offset)" } }
        #expect(offsets.count == 500)
        let ends = before.merging(after) { max($0, $1) }
        #expect(Set(offsets) == Set(ends.flatMap { partition, end in (0..<end).map { "\(partition)/\($0)" } }))
        try await waitUntil("statistics JSON delivered", timeout: .seconds(10)) {
            statistics.withLock { $0.contains { $0.contains("\"type\": \"consumer\"") || $0.contains("\"type\":\"consumer\"") } }
        }
        try await probe.close()
    }
}
