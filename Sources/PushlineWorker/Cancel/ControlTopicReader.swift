import Foundation
import Logging
import Metrics
import PushlineKafka
import ServiceLifecycle

/// Every worker's reader of the control topic (`kafka.control_topic`), as a Service: reads the
/// whole topic outside the consumer group (from the beginning at boot, then following it, polled
/// every 100 ms) and turns each record into a `CancelChange` for `apply`, in the topic's order.
///
/// The first service of the worker's group. Its run first waits (off the cooperative pool) until
/// every cancel already in the topic is applied, or 10 s, or a graceful shutdown, whichever comes
/// first, and then opens `booted`: the intakes start no job before (`waitForBoot`), so a cancel
/// written before its jobs arrive holds for them, and a SIGTERM during the wait stops the worker
/// as at any other time. Creates the topic only when it is missing (compacted, `retention.ms` =
/// the cancel retention); when the broker refuses that, the worker starts at once and says so.
final class ControlTopicReader: Service, Sendable {
    private let follower: KafkaTopicFollower
    private let topic: String
    private let logger: Logger
    private let bootTimeout: Duration
    /// Its first generation opens when the boot wait is over.
    private let booted = ChangeSignal()

    init(
        kafka: PushlineConfiguration.Kafka,
        retentionMilliseconds: Int,
        logger: Logger,
        bootTimeout: Duration = .seconds(10),
        apply: @escaping @Sendable (CancelChange) -> Void
    ) throws(KafkaError) {
        let topic = kafka.controlTopicName
        self.topic = topic
        self.logger = logger
        self.bootTimeout = bootTimeout
        let retention = Int64(retentionMilliseconds)
        follower = try KafkaTopicFollower(
            configuration: KafkaTopicFollowerConfiguration(
                bootstrapServers: kafka.brokers,
                topic: topic,
                properties: kafka.properties,
                creation: .init(partitions: 1, configs: ["cleanup.policy": "compact,delete", "retention.ms": String(retention)])
            ),
            logger: logger,
            onRecord: { record in
                let now = Int64(Date().timeIntervalSince1970 * 1000)
                guard let change = Self.change(of: record, retentionMilliseconds: retention, nowMilliseconds: now, logger: logger)
                else { return }
                apply(change)
            }
        )
    }

    /// Returns once the boot wait is over (`run`), or when the task is cancelled: what an intake
    /// awaits before its first job.
    func waitForBoot() async {
        await booted.wait(after: 0)
    }

    func run() async throws {
        await withGracefulShutdownHandler {
            await boot()
        } onGracefulShutdown: {
            // Ends the boot wait at once: the follower's thread stops within a poll.
            self.follower.requestStop()
        }
        booted.signal()
        // Cancellation (another service failed) ends the wait too.
        try? await gracefulShutdown()
        follower.stop()
    }

    /// Waits, on a thread of its own, until every cancel already in the topic was applied, up to
    /// `bootTimeout` or the follower's stop; logs a warning when the topic was not read in time
    /// (cancels then apply as they are read).
    private func boot() async {
        let (follower, timeout) = (self.follower, bootTimeout)
        let caughtUp = await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: follower.waitUntilCaughtUp(timeout: timeout)) }.start()
        }
        if caughtUp {
            logger.info("control topic read; cancels in force applied", metadata: ["topic": "\(topic)"])
        } else if !follower.isStopping {
            logger.warning(
                "control topic not read; jobs flow, its cancels apply as they are read",
                metadata: ["topic": "\(topic)"]
            )
        }
    }

    /// The change `record` makes at `nowMilliseconds`: nil for a malformed record (logged, a
    /// warning), or a cancel that expired (its timestamp + the retention is past; logged). The
    /// registry logs the changes it applies.
    static func change(of record: KafkaRecord, retentionMilliseconds: Int64, nowMilliseconds: Int64, logger: Logger) -> CancelChange? {
        let change = read(record, retentionMilliseconds: retentionMilliseconds, nowMilliseconds: nowMilliseconds, logger: logger)
        Counter(label: "pushline_control_records_total", dimensions: [("kind", change.kind)]).increment()
        return change.change
    }

    /// `change(of:...)`, with what the record was for the metric: cancel, lift, expired, malformed.
    private static func read(
        _ record: KafkaRecord,
        retentionMilliseconds: Int64,
        nowMilliseconds: Int64,
        logger: Logger
    ) -> (change: CancelChange?, kind: String) {
        let place: Logger.Metadata = ["partition": "\(record.partition)", "offset": "\(record.offset)"]
        let parsed: ControlRecord
        do {
            parsed = try ControlRecord(key: record.keyBytes, value: record.valueBytes)
        } catch {
            logger.warning("control record skipped: \(error)", metadata: place)
            return (nil, "malformed")
        }
        let written = record.timestampMilliseconds ?? nowMilliseconds
        guard
            let change = parsed.change(
                timestampMilliseconds: written,
                retentionMilliseconds: retentionMilliseconds,
                nowMilliseconds: nowMilliseconds
            )
        else {
            logger.info(
                "cancel expired; ignored",
                metadata: place.merging(["target": "\(parsed.target.key)", "written_at": "\(written)"]) { $1 }
            )
            return (nil, "expired")
        }
        // `Cancellations.apply` logs the cancel or lift (one line each).
        if case .lift = change { return (change, "lift") }
        return (change, "cancel")
    }
}
