import Logging
import PushlineAPNS
import PushlineAPNSCore
import PushlineKafka

/// The publishing side of the pipeline: what each outcome's records are (`OutcomeRecords`
/// decides), its metrics, and their publishing through the `ResultPublisher`; a rejected record's
/// result and dead-letter copy. The one owner of the decision to publish.
///
/// It hears outcomes from a job's progress (`tokenEnded`), a group's (`memberEnded`, in
/// JobResults+Groups.swift) or a broadcast's completion, on the event loops; it hands records to
/// the publisher with the progress as their delivery, and passes a job's end on to `release`.
/// Immutable: every count is the progress's, every record waiting the publisher's.
final class JobResults: Sendable {
    /// The topics the pipeline writes to, resolved once (no lookup by name per record).
    struct Topics: Sendable {
        var results: KafkaTopic
        var invalidations: KafkaTopic?
        var deadLetter: KafkaTopic
    }

    let publisher: ResultPublisher
    let topics: Topics
    /// Where a job's end goes (its record released for commit, its notifications out of the gate).
    let release: JobRelease
    /// The results mode and the reasons that invalidate a token.
    private let rules: OutcomeRules
    /// Each app's APNs environment, for `token_invalidated` records.
    private let environments: [String: String]
    let metrics: WorkerMetrics
    private let logger: Logger
    let wallClockMilliseconds: @Sendable () -> Int64
    /// How long notifications waited before their first send (the window controller reads it).
    let queueDelays = QueueDelayMeter()

    init(
        publisher: ResultPublisher,
        topics: Topics,
        release: JobRelease,
        rules: OutcomeRules,
        environments: [String: String],
        metrics: WorkerMetrics,
        logger: Logger,
        wallClockMilliseconds: @escaping @Sendable () -> Int64
    ) {
        self.publisher = publisher
        self.topics = topics
        self.release = release
        self.rules = rules
        self.environments = environments
        self.metrics = metrics
        self.logger = logger
        self.wallClockMilliseconds = wallClockMilliseconds
    }

    // MARK: Rejected jobs

    /// A record that is no job: its `rejected` result and its dead-letter copy; the record is
    /// released once Kafka has both.
    func reject(_ record: KafkaRecord, source: RecordSource, rejection: JobRejection) {
        metrics.rejected(code: rejection.code.rawValue)
        logger.notice(
            "job rejected",
            metadata: ["source": "\(record.id)", "error": "\(rejection)", "job_id": "\(rejection.jobID ?? "-")"]
        )
        let error = rejection.description
        let result = ResultRecord.rejected(
            .init(jobID: rejection.jobID, error: error, source: source, echo: rejection.echo)
        )
        let id = record.id
        let countdown = Countdown(2) { [release] in release.recordReplaced(id) }
        publisher.publish(
            .init(topic: topics.results, key: result.key.map { Array($0.utf8) }, value: result.encoded()),
            acknowledged: countdown.countDown
        )
        var headers = record.headers
        headers.append(KafkaHeader(key: "pushline-error", value: Array(error.utf8)))
        headers.append(KafkaHeader(key: "pushline-source", value: Array(source.coordinates.utf8)))
        publisher.publish(
            .init(topic: topics.deadLetter, key: record.key, value: record.value, headers: headers, isDeadLetter: true),
            acknowledged: countdown.countDown
        )
    }

    // MARK: Jobs

    /// Tokens of a job that end without a request (`reason`: expired, cancelled, a dry run, a
    /// personalised payload that cannot be rendered), in one run (all at one moment: the clocks
    /// are read once for the job), produced together. Each is
    /// final: it has its records and counts in the job's `job_done` like an answered token.
    func unsent(_ progress: JobProgress, indices: some Sequence<Int>, reason: APNSOutcome.NoResponse) {
        let outcome = APNSOutcome(noResponse: reason, attempts: 0, latencyMilliseconds: 0)
        precondition(!Self.isAbandoned(outcome), "\(reason) is not final")
        publisher.withBatch { _ in
            for index in indices { finish(progress, index: index, apnsID: nil, outcome: outcome) }
        }
    }

    /// Token `index` of a device-token job has its final outcome. APNs echoes the request's id
    /// (nil in the answer) or gives another.
    func tokenEnded(_ progress: JobProgress, index: Int, outcome: APNSOutcome) {
        finish(progress, index: index, apnsID: progress.requestIDs.map { .block($0, index: index) }, outcome: outcome)
    }

    /// A token's final outcome: publish its records (`OutcomeRecords` decides which); the token
    /// leaves the in-flight count when Kafka has them all.
    func finish(_ progress: JobProgress, index: Int, apnsID: RecordAPNSID?, outcome: APNSOutcome) {
        if Self.isAbandoned(outcome) {
            // The pool shut down before a final answer, or a revoke withdrew the token's request:
            // nothing is published, and the job is never completed, so the group's next owner
            // sends it again. The token leaves the in-flight count all the same.
            progress.tokenAbandoned(index: index, withdrawn: outcome.noResponse == .withdrawn)
            return
        }
        let now = outcomeClocks()
        // Each read once: a property of a class read again is retained again.
        let (job, shared) = (progress.job, progress.shared)
        let records = tokenRecords(
            job: job,
            index: index,
            outcome: outcome,
            appMetrics: shared.appMetrics,
            laneMetrics: progress.laneMetrics,
            received: shared.received,
            now: now.monotonic,
            run: now.run
        )
        progress.tokenFinal(outcome, answeredAt: now.wall)
        let template = shared.template
        publish(
            records,
            key: job.id,
            delivery: progress,
            estimate: template.estimate(job: job, index: index, apnsID: apnsID, outcome: outcome)
        ) {
            template.write(job: job, index: index, apnsID: apnsID, outcome: outcome, into: &$0)
        }
        // A job's job_done must follow every delivery of the job, and in a run some of them may
        // wait in this thread's batch (or another's): the publisher asks the progress for it once
        // they are produced.
        publisher.tokenPublished(progress)
    }

    /// The wall-clock and monotonic time of an outcome, and the run it ends in (this thread's
    /// open batch, nil outside a run): in a run, the run's time (read once for all its outcomes,
    /// which end at one moment).
    func outcomeClocks() -> (wall: Int64, monotonic: MonotonicInstant, run: ResultBatch?) {
        guard let run = publisher.openBatch else { return (wallClockMilliseconds(), .now, nil) }
        let now = run.now(wall: wallClockMilliseconds)
        return (now.wall, now.monotonic, run)
    }

    /// Whether a token ends with no record here: its pool shut down before a final answer, or a
    /// revoke withdrew its request.
    static func isAbandoned(_ outcome: APNSOutcome) -> Bool {
        outcome.noResponse == .shutdown || outcome.noResponse == .withdrawn
    }

    /// Which records token `index`'s final outcome has (`OutcomeRecords` decides): whether a
    /// delivery record (the mode may leave it out), and the others (nil when there are none).
    /// Counts the outcome in the metrics (in the run's tally when there is one).
    func tokenRecords(
        job: Job,
        index: Int,
        outcome: APNSOutcome,
        appMetrics: WorkerMetrics.AppMetrics,
        laneMetrics: WorkerMetrics.LaneMetrics,
        received: MonotonicInstant,
        now: MonotonicInstant,
        run: ResultBatch?
    ) -> (wantsDelivery: Bool, others: OutcomeRecords?) {
        let others = OutcomeRecords.others(
            job: job,
            index: index,
            outcome: outcome,
            environment: environments[job.app] ?? "custom",
            rules: rules
        )
        if let invalidation = others?.invalidation {
            metrics.invalidation(app: job.app, reason: invalidation.reason)
        }
        let elapsedNanoseconds = now.nanoseconds(since: received)
        metrics.notification(
            appMetrics,
            status: outcome.status,
            reason: outcome.reasonString,
            attempts: outcome.attempts,
            endToEndNanoseconds: elapsedNanoseconds,
            run: run
        )
        metrics.queueDelay(
            laneMetrics,
            nanoseconds: max(0, elapsedNanoseconds - Int64(outcome.latencyMilliseconds * 1_000_000)),
            meter: queueDelays,
            run: run
        )
        return (OutcomeRecords.wantsDelivery(outcome, rules: rules), others)
    }

    /// Publishes one token's records: its delivery record, written by `write` and keyed by `key`
    /// (the job id), unless the mode leaves it out, and its other records; `progress` counts one
    /// acknowledgement once Kafka has them all (at once when there are none, as for a 2xx in
    /// compact mode). A delivery record alone goes through the thread's run when one is open.
    func publish(
        _ records: (wantsDelivery: Bool, others: OutcomeRecords?),
        key: String,
        delivery progress: ResultDelivery,
        estimate: @autoclosure () -> Int,
        write: (inout JSONWriter) -> Void
    ) {
        // A dead token (keyed by token) or a missing channel (keyed by channel) goes on the
        // results topic and on the invalidations topic when there is one.
        var extra: [ResultPublisher.Outgoing] = []
        func invalidation(key: String, value: [UInt8]) {
            let key = Array(key.utf8)
            extra.append(.init(topic: topics.results, key: key, value: value))
            if let invalidations = topics.invalidations {
                extra.append(.init(topic: invalidations, key: key, value: value))
            }
        }
        // Unwrapped once, and only when there are any: each `records.others?.` copied the whole
        // optional (its records and their strings) for every token, about 2% of the worker at
        // 100 tokens per job with every token expired.
        if let others = records.others {
            if let invalidated = others.invalidation {
                invalidation(key: invalidated.token, value: ResultRecord.tokenInvalidated(invalidated).encoded())
            }
            if let gone = others.channelGone {
                invalidation(key: gone.channelID, value: ResultRecord.channelGone(gone).encoded())
            }
        }
        switch (records.wantsDelivery, extra.isEmpty) {
        case (false, true):
            progress.acknowledged()
        case (true, true):
            publisher.publish(to: topics.results, key: key, token: progress, estimate: estimate(), write: write)
        default:
            let delivery =
                records.wantsDelivery
                ? [
                    ResultPublisher.Outgoing(
                        topic: topics.results,
                        key: Array(key.utf8),
                        value: JSONWriter.encode(estimate: estimate(), write)
                    )
                ] : []
            let outgoing = delivery + extra
            let tokenDone = Countdown(outgoing.count, done: progress.acknowledged)
            for record in outgoing {
                publisher.publish(record, acknowledged: tokenDone.countDown)
            }
        }
    }
}
