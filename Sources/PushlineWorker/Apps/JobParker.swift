import Logging
import PushlineAPNS
import PushlineKafka

/// Parks jobs: a job of an app that cannot take it now (held, paced or slow at its share:
/// `AppAdmission`) is copied to the deferred topic, as its sender wrote it, with its first source,
/// app, lane and not-before time in headers (`ParkedRecordHeaders`); its record is completed once
/// Kafka acknowledged the copy, never before (at-least-once: the copy or the record is in Kafka at
/// every moment). The deferred topic's own consumer brings it back (`DeferredIntake`).
final class JobParker: Sendable {
    private let publisher: ResultPublisher
    private let topic: KafkaTopic
    private let release: JobRelease
    private let metrics: [String: AppWindowMetrics]
    private let wallClockMilliseconds: @Sendable () -> Int64

    init(
        publisher: ResultPublisher,
        topic: KafkaTopic,
        release: JobRelease,
        metrics: [String: AppWindowMetrics],
        wallClockMilliseconds: @escaping @Sendable () -> Int64 = WallClock.milliseconds
    ) {
        self.publisher = publisher
        self.topic = topic
        self.release = release
        self.metrics = metrics
        self.wallClockMilliseconds = wallClockMilliseconds
    }

    var topicName: String { topic.name }

    /// Parks the started records of `records` (element `i` of `started` says whether `records[i]`
    /// started) that are jobs: their copies go to the deferred topic, and each record completes
    /// when its copy is acknowledged. `notBeforeDelay`: for each app, how long its jobs should wait
    /// at least (a paced app's estimate of its room; zero for the others).
    func park(_ records: [DecodedRecord], started: [Bool], lane: SendLane, notBeforeDelay: (String) -> Int64) {
        let now = wallClockMilliseconds()
        var jobs = 0
        for index in records.indices where started[index] { jobs += 1 }
        guard jobs > 0 else { return }
        release.gate.jobsStarted(jobs)
        for index in records.indices where started[index] {
            let decoded = records[index]
            guard case .success(let job) = decoded.job else {
                preconditionFailure("only jobs are parked")
            }
            let headers = ParkedRecordHeaders(
                source: decoded.source ?? RecordSource(decoded.record.id),
                app: job.app,
                lane: lane,
                notBefore: now + notBeforeDelay(job.app),
                parkedAt: now
            )
            let value = decoded.original ?? decoded.record.value
            // A worker with several apps keeps every job's bytes (`JobRecordReader.keepsBytes`).
            precondition(!value.isEmpty, "a parked job's record has no bytes")
            let id = decoded.record.id
            metrics[job.app]?.parked.increment()
            publisher.publish(
                .init(
                    topic: topic,
                    // Keyed by app: one app's parked jobs share a partition, in the order parked.
                    key: Array(job.app.utf8),
                    value: value,
                    headers: headers.headers
                ),
                acknowledged: { [release] in release.recordReplaced(id) }
            )
        }
    }
}
