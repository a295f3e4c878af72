import PushlineKafka
import PushlineTestSupport
import Testing

/// Offsets and rebalances against the real embedded broker. Each test starts its own broker on a
/// free port and stops it at the end. A member here takes ~session.timeout.ms to join.
@Suite(.serialized, .timeLimit(.minutes(3))) struct ConsumerIntegrationTests {
    @Test func resumesExactlyAfterTheContiguousCompletedPrefix() async throws {
        let broker = try await EmbeddedBroker()
        defer { broker.stop() }
        let topic = "jobs-resume"
        try await broker.createTopic(topic, partitions: 4)
        let ends = try await Integration.produce(broker, topic: topic, count: 10_000)
        #expect(ends.values.reduce(0, +) == 10_000)
        // One hole per partition, well inside it: everything else completes, out of order.
        let holes = ends.mapValues { $0 * 3 / 5 }
        let configuration = Integration.consumerConfiguration(broker, group: "g-resume", topic: topic)
        let first = try ConsumerProbe(configuration, seed: 11) { holes[$0.partition] != $0.offset }
        try await waitUntil("first consumer sees all 10,000 records", timeout: .seconds(60)) {
            first.recordCount >= 10_000
        }
        #expect(first.consumer.inFlightCount == holes.count)
        try await first.close(drainTimeout: .milliseconds(500))

        // One marker record per partition after the close, so the wait below ends even if the
        // first member had (wrongly) committed everything.
        let markers = try await Integration.produce(broker, topic: topic, count: 4, partitions: Array(ends.keys))
        let second = try ConsumerProbe(configuration, seed: 12)
        let expected = markers.reduce(0) { $0 + Int($1.value - holes[$1.key]!) }
        try await waitUntil("second consumer reaches every marker", timeout: .seconds(60)) {
            markers.allSatisfy { second.saw($0.key, $0.value - 1) }
        }
        // Exactly after the contiguous completed prefix: the hole itself is the first record again.
        #expect(second.firstOffsets == holes)
        #expect(second.recordCount == expected)
        try await second.close()
    }

    @Test func twoMembersSplitThePartitionsAndTogetherSeeEveryRecord() async throws {
        let broker = try await EmbeddedBroker()
        defer { broker.stop() }
        let topic = "jobs-split"
        try await broker.createTopic(topic, partitions: 4)
        let configuration = Integration.consumerConfiguration(broker, group: "g-split", topic: topic)
        let a = try ConsumerProbe(configuration, seed: 21)
        let b = try ConsumerProbe(configuration, seed: 22)
        try await waitUntil("both members hold a share of the 4 partitions", timeout: .seconds(60)) {
            let (left, right) = (a.assigned, b.assigned)
            return !left.isEmpty && !right.isEmpty && left.isDisjoint(with: right) && left.union(right).count == 4
        }
        let revokesAtTheSplit = a.seen.withLock { $0.revoked.count } + b.seen.withLock { $0.revoked.count }
        let ends = try await Integration.produce(broker, topic: topic, count: 2_000)
        let all = Set(ends.flatMap { partition, end in (0..<end).map { "\(partition)/\($0)" } })
        try await waitUntil("together they see all 2,000 records", timeout: .seconds(60)) {
            let seen = a.seen.withLock { Set($0.records.map { "\($0.partition)/\($0.offset)" }) }
            return seen.union(b.seen.withLock { $0.records.map { "\($0.partition)/\($0.offset)" } }) == all
        }
        let seenA = a.seen.withLock { $0.records.map { "\($0.partition)/\($0.offset)" } }
        let seenB = b.seen.withLock { $0.records.map { "\($0.partition)/\($0.offset)" } }
        #expect(Set(seenA).union(seenB) == all)
        // Each record once, unless the split itself changed: on a loaded host Tansu once left a
        // heartbeat unanswered for the 6 s session, the member's partitions were lost, and the
        // other member read them again from the last commit (at-least-once, as designed).
        let revokes = a.seen.withLock { $0.revoked.count } + b.seen.withLock { $0.revoked.count } - revokesAtTheSplit
        if revokes == 0 {
            #expect(Set(seenA).isDisjoint(with: seenB))
            #expect(seenA.count + seenB.count == 2_000)
        } else {
            print("split test: \(revokes) partitions revoked after the split; \(seenA.count + seenB.count) records read for 2,000")
        }
        // Record contents survive the round trip: key, value and header are the index.
        let sample = a.seen.withLock { $0.records.first } ?? b.seen.withLock { $0.records.first }
        let record = try #require(sample)
        #expect(record.key == record.value && record.headers == [KafkaHeader(key: "index", value: record.value)])
        #expect(record.timestampMilliseconds != nil)
        try await a.close()
        try await b.close()
    }

    @Test func revokeDuringProcessingNeverStoresPastAnIncompleteRecord() async throws {
        let broker = try await EmbeddedBroker()
        defer { broker.stop() }
        let topic = "jobs-revoke"
        try await broker.createTopic(topic, partitions: 2)
        let ends = try await Integration.produce(broker, topic: topic, count: 1_000)
        let holes = ends.mapValues { $0 / 4 }
        let configuration = Integration.consumerConfiguration(broker, group: "g-revoke", topic: topic, drain: .seconds(2))
        let first = try ConsumerProbe(configuration, seed: 31) { holes[$0.partition] != $0.offset }
        try await waitUntil("first member sees all records", timeout: .seconds(60)) { first.recordCount >= 1_000 }

        // A second member joins while the holes are still in flight: partitions are revoked from
        // the first (one with cooperative assignment, both with the default eager one); its drain
        // times out on the hole and must store only the prefix.
        let second = try ConsumerProbe(configuration, seed: 32)
        try await waitUntil("a partition moves to the second member", timeout: .seconds(60)) {
            !second.assigned.isEmpty && !first.seen.withLock { $0.revoked.isEmpty }
        }
        let moved = try #require(second.assigned.first)
        // The hole completes late, after the revoke: this member must not store it any more.
        let lateHole = try #require(first.seen.withLock { $0.held.first { $0.partition == moved.partition } })
        first.consumer.complete(lateHole)
        // Markers after the revoke, so the waits below end even if offsets were committed too far.
        let markers = try await Integration.produce(broker, topic: topic, count: 1, partitions: [moved.partition])
        try await waitUntil("the second member reads the moved partition up to its marker", timeout: .seconds(60)) {
            second.saw(moved.partition, markers[moved.partition]! - 1)
        }
        #expect(second.firstOffsets[moved.partition] == holes[moved.partition])

        // The first member leaves with its other hole incomplete; the second takes over from there.
        try await first.close(drainTimeout: .milliseconds(500))
        let kept = ends.keys.first { $0 != moved.partition }!
        let keptMarker = try await Integration.produce(broker, topic: topic, count: 1, partitions: [kept])
        try await waitUntil("the second member reads the other partition up to its marker", timeout: .seconds(60)) {
            second.saw(kept, keptMarker[kept]! - 1)
        }
        #expect(second.firstOffsets[kept] == holes[kept])
        try await second.close()
    }
}
