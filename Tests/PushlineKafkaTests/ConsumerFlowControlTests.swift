import PushlineKafka
import PushlineTestSupport
import Testing

/// Pause/resume and the statistics hook against the embedded broker.
@Suite(.serialized, .timeLimit(.minutes(2))) struct ConsumerFlowControlTests {
    @Test func pausedConsumerFetchesNothingAndResumesWithoutGapsOrDuplicates() async throws {
        let broker = try await EmbeddedBroker()
        defer { broker.stop() }
        let topic = "jobs-pause"
        try broker.createTopic(topic, partitions: 2)
        var configuration = Integration.consumerConfiguration(broker, group: "g-pause", topic: topic)
        configuration.statisticsInterval = .milliseconds(200)
        let statistics = Locked<[String]>([])
        let probe = try ConsumerProbe(configuration, onStatistics: { json in statistics.withLock { $0.append(json) } })
        try await waitUntil("assigned both partitions", timeout: .seconds(60)) { probe.assigned.count == 2 }
        let before = try await Integration.produce(broker, topic: topic, count: 200)
        try await waitUntil("first records arrive", timeout: .seconds(30)) { probe.recordCount == 200 }

        probe.consumer.pause()
        // Let the pause reach the poll thread (it applies it within pollInterval), then produce.
        let pausedAt = ContinuousClock.now
        try await waitUntil("pause applied", timeout: .seconds(5)) { ContinuousClock.now - pausedAt > .milliseconds(300) }
        let after = try await Integration.produce(broker, topic: topic, count: 300)
        // Absence can only be checked over a window: nothing may arrive for two seconds.
        await #expect(throws: (any Error).self) {
            try await waitUntil("records arrive while paused", timeout: .seconds(2)) { probe.recordCount > 200 }
        }
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
