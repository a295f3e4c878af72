import Logging
import PushlineAPNS
import PushlineAPNSCore
import PushlineKafka
import Synchronization

/// The worker's hot path: one job record in, one APNs request per token, one result record per
/// token out, and the record's offset completed once every result is acknowledged by Kafka.
///
/// Called from the consumer loop (`handle`) and from APNs and producer callbacks on their own
/// threads; its shared state is atomics and the in-flight gate.
final class JobPipeline: Sendable {
    struct Topics: Sendable {
        var results: String
        var invalidations: String?
        var deadLetter: String
    }

    private let decoder: JobDecoder
    private let clients: [String: APNSClient]
    /// Each configured app's metrics, resolved once (the decoder accepts only configured apps).
    private let appMetrics: [String: WorkerMetrics.AppMetrics]
    /// Each app's APNs environment, for `token_invalidated` records.
    private let environments: [String: String]
    private let publisher: ResultPublisher
    private let topics: Topics
    private let invalidateOn: Set<String>
    /// A job's record is done with, with its weight (notifications): completed (`true`), or given
    /// up uncompleted because its work was withdrawn (`false`). Either way it leaves the counts.
    private let recordEnded: @Sendable (_ id: RecordID, _ weight: Int, _ completed: Bool) -> Void
    let gate: InflightGate
    private let metrics: WorkerMetrics
    private let ids = APNSIDGenerator()
    private let logger: Logger
    private let wallClockMilliseconds: @Sendable () -> Int64
    /// Jobs handed to the pipeline whose results are not all acknowledged yet (the shutdown
    /// drain waits for it to reach zero).
    let active = WaitableCount()
    /// The notifications of those jobs (with the consumer's `uncommittedWeight`, what a crash
    /// now would make the group send again).
    let activeNotifications = WaitableCount()
    /// How long notifications waited before their first send (the window controller reads it).
    let queueDelays = QueueDelayMeter()

    init(
        decoder: JobDecoder,
        clients: [String: APNSClient],
        publisher: ResultPublisher,
        topics: Topics,
        invalidateOn: [String],
        gate: InflightGate,
        metrics: WorkerMetrics,
        logger: Logger,
        wallClockMilliseconds: @escaping @Sendable () -> Int64 = WallClock.milliseconds,
        complete: @escaping @Sendable (RecordID, Int) -> Void,
        abandon: @escaping @Sendable (RecordID) -> Void = { _ in }
    ) {
        self.decoder = decoder
        self.clients = clients
        self.appMetrics = Dictionary(uniqueKeysWithValues: clients.keys.map { ($0, metrics.app($0)) })
        self.environments = clients.mapValues { $0.configuration.endpoint.environment }
        self.publisher = publisher
        self.topics = topics
        var reasons = Set(invalidateOn)
        // ExpiredToken is the same 410 case as Unregistered.
        if reasons.contains("Unregistered") { reasons.insert("ExpiredToken") }
        self.invalidateOn = reasons
        self.gate = gate
        self.metrics = metrics
        self.logger = logger
        self.wallClockMilliseconds = wallClockMilliseconds
        let (active, activeNotifications) = (self.active, self.activeNotifications)
        self.recordEnded = { id, weight, completed in
            if completed {
                // Uncommitted all along: the consumer counts the weight from here until the commit.
                complete(id, weight)
            } else {
                abandon(id)
            }
            activeNotifications.subtract(weight)
            active.subtract(1)
        }
    }

    /// Decodes one record and starts its work, in `lane`. Never throws: a bad record becomes a
    /// rejection. Thread-safe: the bulk and urgent intakes call it concurrently.
    func handle(_ record: KafkaRecord, lane: SendLane = .bulk) {
        active.add(1)
        let source = RecordSource(topic: record.topic, partition: record.partition, offset: record.offset)
        switch decoder.decode(record.value) {
        case .failure(let rejection):
            reject(record, source: source, rejection: rejection)
        case .success(let job):
            send(job, id: record.id, source: source, received: MonotonicInstant.now, lane: lane, producedAt: record.timestampMilliseconds)
        }
    }

    // MARK: Rejected jobs

    private func reject(_ record: KafkaRecord, source: RecordSource, rejection: JobRejection) {
        metrics.rejected(code: rejection.code.rawValue)
        logger.notice(
            "job rejected",
            metadata: ["source": "\(record.id)", "error": "\(rejection)", "job_id": "\(rejection.jobID ?? "-")"]
        )
        let error = rejection.description
        let result = ResultRecord.rejected(.init(jobID: rejection.jobID, error: error, source: source))
        let id = record.id
        let countdown = Countdown(2) { [recordEnded] in recordEnded(id, 0, true) }
        publisher.publish(
            .init(topic: topics.results, key: result.key.map { Array($0.utf8) }, value: result.encoded()),
            acknowledged: countdown.countDown
        )
        var headers = record.headers
        headers.append(KafkaHeader(key: "pushline-error", value: Array(error.utf8)))
        headers.append(KafkaHeader(key: "pushline-source", value: Array("\(source.topic)/\(source.partition)/\(source.offset)".utf8)))
        publisher.publish(
            .init(topic: topics.deadLetter, key: record.key, value: record.value, headers: headers, isDeadLetter: true),
            acknowledged: countdown.countDown
        )
    }

    // MARK: Jobs

    private func send(
        _ job: Job,
        id: RecordID,
        source: RecordSource,
        received: MonotonicInstant,
        lane: SendLane,
        producedAt: Int64?
    ) {
        // The device tokens, or a broadcast's one channel: one request and one delivery each.
        let tokens = job.recipients
        gate.add(tokens.count, lane: lane)
        activeNotifications.add(tokens.count)
        let laneMetrics = metrics.lane(lane)
        let progress = JobProgress(
            id: id,
            tokens: tokens.count,
            lane: lane,
            laneMetrics: laneMetrics,
            producedAt: producedAt,
            pipeline: self
        )
        // Every delivery record of the job has the job id as its key, and the same job id, app and
        // source in its value: made once for all of them.
        let key = Array(job.id.utf8)
        let template = DeliveryRecordTemplate(
            jobID: job.id,
            app: job.app,
            source: source,
            broadcast: job.channelID != nil,
            records: tokens.count
        )
        let appMetrics = self.appMetrics[job.app] ?? metrics.app(job.app)
        let timing = Timing(received: received, lane: laneMetrics)
        guard let client = clients[job.app] else {
            // The decoder only accepts configured apps; this cannot happen unless they diverge.
            preconditionFailure("job \(job.id) names app '\(job.app)' with no APNs client")
        }

        let options = sendOptions(for: job, lane: lane, group: id.generation)
        if let deadline = options.deadline, deadline <= .now {
            for token in tokens {
                finish(
                    job,
                    token: token,
                    apnsID: nil,
                    outcome: APNSOutcome(noResponse: .expired, attempts: 0, latencyMilliseconds: 0),
                    timing: timing,
                    key: key,
                    template: template,
                    appMetrics: appMetrics,
                    progress: progress
                )
            }
            return
        }

        let sent = job.notifications(bundleID: decoder.bundleIDs[job.app] ?? "", ids: ids)
        client.send(sent, options: options) { [self] index, outcome in
            // The two fields, not a copy of the whole notification (every field retained).
            finish(
                job,
                token: tokens[index],
                apnsID: sent[index].apnsID,
                outcome: outcome,
                timing: timing,
                key: key,
                template: template,
                appMetrics: appMetrics,
                progress: progress
            )
        }
    }

    /// A job's last token ended (`JobProgress`): complete its record, or, when a token was
    /// abandoned, give the record up uncompleted.
    func jobEnded(_ progress: JobProgress, done: Bool) {
        if done {
            metrics.jobCompleted()
            metrics.laneJobCompleted(
                progress.laneMetrics,
                notifications: progress.weight,
                resultAgeMilliseconds: progress.producedAt.map { wallClockMilliseconds() - $0 }
            )
        }
        recordEnded(progress.id, progress.weight, done)
    }

    /// When a job's record arrived, and its lane, for its tokens' latency metrics.
    private struct Timing {
        var received: MonotonicInstant
        var lane: WorkerMetrics.LaneMetrics
    }

    /// The job's deadline and the last moment a retry may start, as monotonic instants; `group`
    /// is its partition's assignment generation, which a revoke may withdraw.
    private func sendOptions(for job: Job, lane: SendLane, group: UInt64) -> APNSSendOptions {
        guard job.deadlineMilliseconds != nil || job.expiration != nil else { return APNSSendOptions(lane: lane, group: group) }
        let nowWall = wallClockMilliseconds()
        let nowMono = MonotonicInstant.now
        func instant(_ wallMilliseconds: Int64) -> MonotonicInstant {
            nowMono.advanced(by: .milliseconds(wallMilliseconds - nowWall))
        }
        let deadline = job.deadlineMilliseconds.map(instant)
        var retryUntil = deadline
        if let expiration = job.expiration {
            // apns-expiration 0 means "now or never": no retries.
            let expires = expiration == 0 ? nowMono : instant(expiration * 1000)
            retryUntil = retryUntil.map { min($0, expires) } ?? expires
        }
        return APNSSendOptions(deadline: deadline, retryUntil: retryUntil, lane: lane, group: group)
    }

    /// A token's final outcome: publish its records; the token leaves the in-flight count when
    /// Kafka has them all.
    private func finish(
        _ job: Job,
        token: String,
        apnsID: String?,
        outcome: APNSOutcome,
        timing: Timing,
        key: [UInt8],
        template: DeliveryRecordTemplate,
        appMetrics: WorkerMetrics.AppMetrics,
        progress: JobProgress
    ) {
        if outcome.noResponse == .shutdown || outcome.noResponse == .withdrawn {
            // The pool shut down before a final answer, or a revoke withdrew the token's request:
            // nothing is published, and the job is never completed, so the group's next owner
            // sends it again. The token leaves the in-flight count all the same.
            progress.tokenAbandoned()
            return
        }
        let reason = outcome.reasonString
        let value = template.encode(
            token: token,
            status: outcome.status,
            reason: reason,
            apnsID: outcome.response?.apnsID ?? apnsID,
            apnsUniqueID: outcome.response?.apnsUniqueID,
            timestamp: outcome.response?.timestamp,
            attempts: outcome.attempts,
            latencyMilliseconds: outcome.latencyMilliseconds,
            heldMilliseconds: outcome.heldMilliseconds
        )
        let record = ResultPublisher.Outgoing(topic: topics.results, key: key, value: value)
        var extra: [ResultPublisher.Outgoing] = []
        if outcome.status == 410, let reason, invalidateOn.contains(reason) {
            // Apple's reason verbatim: `Unregistered` in `invalidate_on` covers `ExpiredToken` too,
            // but the record says which one APNs gave.
            let reported = reason
            let invalidated = ResultRecord.tokenInvalidated(
                .init(
                    token: token,
                    app: job.app,
                    topic: job.topic,
                    reason: reported,
                    invalidSince: outcome.response?.timestamp,
                    jobID: job.id,
                    environment: environments[job.app] ?? "custom"
                )
            )
            let value = invalidated.encoded()
            extra.append(.init(topic: topics.results, key: Array(token.utf8), value: value))
            if let invalidations = topics.invalidations {
                extra.append(.init(topic: invalidations, key: Array(token.utf8), value: value))
            }
            metrics.invalidation(app: job.app, reason: reported)
        }
        if let channelID = job.channelID, let reason, reason == APNSReason.channelNotRegistered.rawValue {
            // Keyed by channel, on the results topic and, like token_invalidated, on the
            // invalidations topic when there is one.
            let gone = ResultRecord.channelGone(.init(channelID: channelID, app: job.app, reason: reason, jobID: job.id)).encoded()
            extra.append(.init(topic: topics.results, key: Array(channelID.utf8), value: gone))
            if let invalidations = topics.invalidations {
                extra.append(.init(topic: invalidations, key: Array(channelID.utf8), value: gone))
            }
        }
        let elapsedNanoseconds = MonotonicInstant.now.nanoseconds(since: timing.received)
        metrics.notification(
            appMetrics,
            status: outcome.status,
            reason: reason,
            attempts: outcome.attempts,
            endToEndNanoseconds: elapsedNanoseconds
        )
        let queueDelay = elapsedNanoseconds - Int64(outcome.latencyMilliseconds * 1_000_000)
        queueDelays.add(nanoseconds: queueDelay)
        metrics.laneQueueDelay(timing.lane, nanoseconds: queueDelay)

        // The token is done when Kafka has all its records: the usual one, or with an invalidation.
        if extra.isEmpty {
            publisher.publish(record, token: progress)
        } else {
            let tokenDone = Countdown(1 + extra.count, done: progress.tokenAcknowledged)
            publisher.publish(record, acknowledged: tokenDone.countDown)
            for record in extra {
                publisher.publish(record, acknowledged: tokenDone.countDown)
            }
        }
    }
}
