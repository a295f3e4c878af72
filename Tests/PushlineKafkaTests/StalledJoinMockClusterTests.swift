import Logging
import PushlineKafka
import PushlineTestSupport
import Synchronization
import Testing

/// A coordinator that never answers this member's JoinGroup (the embedded broker does that now and
/// then to a newcomer whose round completed for the others): the consumer abandons the join after
/// `stalledJoinLimit` and gets its assignment, instead of waiting `max.poll.interval.ms` + 3 s.
@Suite(.serialized) struct StalledJoinMockClusterTests {
    static let topic = "stalled-join"

    func makeConsumer(_ cluster: MockCluster, limit: Duration, logger: Logger) throws -> KafkaConsumer {
        try KafkaConsumer(
            configuration: KafkaConsumerConfiguration(
                bootstrapServers: cluster.bootstrapServers,
                groupID: "stalled-join-group",
                topics: [Self.topic],
                // librdkafka waits max.poll.interval.ms + 3 s for a JoinGroup answer.
                properties: ["session.timeout.ms": "6000", "heartbeat.interval.ms": "500", "max.poll.interval.ms": "60000"],
                closeJoinWait: .zero,
                stalledJoinLimit: limit
            ),
            logger: logger
        )
    }

    /// A cluster whose coordinator answers the first JoinGroup after `seconds` (the 50 s default
    /// outlasts the tests: it is never answered).
    func stalledCluster(answeringAfter seconds: Int32 = 50) throws -> MockCluster {
        let cluster = try MockCluster()
        cluster.createTopic(Self.topic, partitions: 2)
        cluster.delayNextRequest(apiKey: MockCluster.joinGroup, milliseconds: seconds * 1000)
        return cluster
    }

    @Test func aJoinTheCoordinatorSitsOnIsAbandonedAndTheMemberGetsItsPartitions() async throws {
        let cluster = try stalledCluster()
        let lines = CapturedLines()
        let consumer = try makeConsumer(cluster, limit: .seconds(8), logger: lines.logger)
        let began = ContinuousClock.now
        // Before the coordinator's own answer (50 s) and librdkafka's wait (max.poll.interval.ms
        // + 3 s): the partitions can only come from the abandoned join. 25 s was once too short
        // for the rejoin beside 22 other suites on CI's two cores.
        try await waitUntil("the member owns both partitions", timeout: .seconds(45), interval: .milliseconds(50)) {
            consumer.assignment.count == 2
        }
        let took = ContinuousClock.now - began
        #expect(took >= .seconds(8), "not before the limit: \(took)")
        #expect(lines.contains("rejoining: join pending for 8"), "the warning says what happened: \(lines.all)")
        #expect(!lines.contains("Kafka unreachable"), "the cut connections are not an outage: \(lines.all)")
        await consumer.close(drainTimeout: .seconds(1))
    }

    /// The control: without the limit the member waits for the coordinator's answer, however
    /// late, and gets its partitions from it. The answer comes 12 s after the JoinGroup, later
    /// than the other test's limit: the member gets both partitions then, not before (so the mock
    /// cluster really sits on the JoinGroup for as long as asked), and never rejoins.
    @Test func withoutTheLimitTheMemberWaitsForTheAnswer() async throws {
        let cluster = try stalledCluster(answeringAfter: 12)
        let lines = CapturedLines(level: .info)
        let began = ContinuousClock.now
        let consumer = try makeConsumer(cluster, limit: .zero, logger: lines.logger)
        // The deadline only has to outlast the answer on a slow host; the assertions are below.
        try await waitUntil("the member owns both partitions", timeout: .seconds(60), interval: .milliseconds(50)) {
            consumer.assignment.count == 2
        }
        let took = ContinuousClock.now - began
        #expect(took >= .seconds(12), "the partitions came with the answer, not before: \(took)")
        #expect(!lines.contains("rejoining"), "the member waited instead of rejoining: \(lines.all)")
        await consumer.close(drainTimeout: .seconds(1))
    }
}

/// Log lines at `level` and above (warning unless told), with their metadata, kept for assertions.
final class CapturedLines: Sendable {
    private let lines = Mutex<[String]>([])
    private let level: Logger.Level

    init(level: Logger.Level = .warning) {
        self.level = level
    }

    var logger: Logger {
        Logger(label: "stalled-join") { _ in CapturingHandler(lines: self, logLevel: self.level) }
    }

    var all: [String] { lines.withLock { $0 } }

    func contains(_ text: String) -> Bool {
        lines.withLock { $0.contains { $0.contains(text) } }
    }

    fileprivate func append(_ line: String) {
        lines.withLock { $0.append(line) }
    }
}

private struct CapturingHandler: LogHandler {
    let lines: CapturedLines
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .warning

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let fields = (event.metadata ?? [:]).sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }
        lines.append("\(event.level): \(event.message)" + (fields.isEmpty ? "" : " [\(fields.joined(separator: ", "))]"))
    }
}
