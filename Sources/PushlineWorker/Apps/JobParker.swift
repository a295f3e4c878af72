import Logging
import PushlineAPNS
import PushlineKafka

/// Parks jobs: a job of an app that cannot take it now (held, paced or slow at its share:
/// `AppAdmission`), or a held app's job withdrawn from its pool in a revoke, is copied to the
/// deferred topic, as its sender wrote it, with its first source, app, lane and not-before time in
/// headers (`ParkedRecordHeaders`). The caller completes the job's record once Kafka acknowledged
/// the copy, never before (at-least-once: the copy or the record is in Kafka at every moment). The
/// deferred topic's own consumer brings it back (`DeferredIntake`).
final class JobParker: Sendable {
    private let publisher: ResultPublisher
    private let topic: KafkaTopic
    private let metrics: [String: AppWindowMetrics]
    private let wallClockMilliseconds: @Sendable () -> Int64

    init(
        publisher: ResultPublisher,
        topic: KafkaTopic,
        metrics: [String: AppWindowMetrics],
        wallClockMilliseconds: @escaping @Sendable () -> Int64 = WallClock.milliseconds
    ) {
        self.publisher = publisher
        self.topic = topic
        self.metrics = metrics
        self.wallClockMilliseconds = wallClockMilliseconds
    }

    /// Produces a copy of `job` (its record's bytes, `value`) first read at `source`;
    /// `acknowledged` runs once Kafka has it. `notBeforeDelay`: how long it should wait at least
    /// (milliseconds).
    func park(
        _ job: Job,
        value: [UInt8],
        source: RecordSource,
        lane: SendLane,
        notBeforeDelay: Int64 = 0,
        acknowledged: @escaping @Sendable () -> Void
    ) {
        // A worker with several apps keeps every job's bytes (`JobRecordReader.keepsBytes`).
        precondition(!value.isEmpty, "a parked job's record has no bytes")
        let now = wallClockMilliseconds()
        let headers = ParkedRecordHeaders(source: source, app: job.app, lane: lane, notBefore: now + notBeforeDelay, parkedAt: now)
        metrics[job.app]?.parked.increment()
        publisher.publish(
            // Keyed by app: one app's parked jobs share a partition, in the order parked.
            .init(topic: topic, key: Array(job.app.utf8), value: value, headers: headers.headers),
            acknowledged: acknowledged
        )
    }
}
