import Logging
import PushlineAPNS
import PushlineAPNSCore
import PushlineKafka
import Synchronization

/// The worker's hot path: one job record in, one APNs request per token, the records of each
/// token's outcome (`OutcomeRecords`) and the job's `job_done` out, and the record's offset
/// completed once every one of them is acknowledged by Kafka.
///
/// Called from the consumer loop (`handle`) and from APNs and producer callbacks on their own
/// threads; its shared state is atomics and the in-flight gate.
final class JobPipeline: Sendable {
    /// The topics the pipeline writes to, resolved once (no lookup by name per record).
    struct Topics: Sendable {
        var results: KafkaTopic
        var invalidations: KafkaTopic?
        var deadLetter: KafkaTopic
    }

    private let decoder: JobDecoder
    private let clients: [String: APNSClient]
    /// Each configured app's metrics, resolved once (the decoder accepts only configured apps).
    let appMetrics: [String: WorkerMetrics.AppMetrics]
    /// Each app's APNs environment, for `token_invalidated` records.
    private let environments: [String: String]
    /// Also the publisher of a job's (a group's) records' deliveries (`ResultDelivery`).
    let publisher: ResultPublisher
    /// The results topic's name (a job's progress reports deliveries under it).
    var resultsTopic: String { topics.results.name }
    let topics: Topics
    /// The results mode and the reasons that invalidate a token.
    private let rules: OutcomeRules
    /// A job's record is done with, with its weight (notifications): completed (`true`), or given
    /// up uncompleted because its work was withdrawn (`false`). Either way it leaves the counts.
    let recordEnded: @Sendable (_ id: RecordID, _ weight: Int, _ completed: Bool) -> Void
    /// Records completed together (a group's), each with its weight: one call, one consumer lock.
    let recordsCompleted: @Sendable (_ records: [(id: RecordID, weight: Int)]) -> Void
    let gate: InflightGate
    let metrics: WorkerMetrics
    /// Where every request's `apns-id` comes from (a job reserves a block, a group one for all).
    let ids = APNSIDGenerator()
    private let logger: Logger
    let wallClockMilliseconds: @Sendable () -> Int64
    /// How long notifications waited before their first send (the window controller reads it).
    let queueDelays = QueueDelayMeter()

    init(
        decoder: JobDecoder,
        clients: [String: APNSClient],
        publisher: ResultPublisher,
        topics: Topics,
        invalidateOn: [String],
        results: ResultsMode = .full,
        gate: InflightGate,
        metrics: WorkerMetrics,
        logger: Logger,
        wallClockMilliseconds: @escaping @Sendable () -> Int64 = WallClock.milliseconds,
        complete: @escaping @Sendable (RecordID, Int) -> Void,
        completeAll: @escaping @Sendable ([(id: RecordID, weight: Int)]) -> Void,
        abandon: @escaping @Sendable (RecordID) -> Void = { _ in }
    ) {
        self.decoder = decoder
        self.clients = clients
        self.appMetrics = Dictionary(uniqueKeysWithValues: clients.keys.map { ($0, metrics.app($0)) })
        self.environments = clients.mapValues { $0.configuration.endpoint.environment }
        self.publisher = publisher
        self.topics = topics
        self.rules = OutcomeRules(mode: results, invalidateOn: invalidateOn)
        self.gate = gate
        self.metrics = metrics
        self.logger = logger
        self.wallClockMilliseconds = wallClockMilliseconds
        self.recordsCompleted = completeAll
        self.recordEnded = { id, weight, completed in
            if completed {
                // Uncommitted all along: the consumer counts the weight from here until the commit.
                complete(id, weight)
            } else {
                abandon(id)
            }
        }
    }

    /// Decodes one record (pure: nothing starts). A record the consumer's poll thread read
    /// (`JobRecordReader`) carries its job already; the others are decoded from their bytes.
    func decode(_ record: KafkaRecord) -> DecodedRecord {
        Self.decode(record, with: decoder)
    }

    static func decode(_ record: KafkaRecord, with decoder: JobDecoder) -> DecodedRecord {
        if let box = record.reading as? Job.Box {
            return DecodedRecord(record: record, job: .success(Job(box: box)))
        }
        return DecodedRecord(record: record, job: decoder.decode(record.valueBytes))
    }

    /// Decodes one record and starts its work, in `lane`. Never throws: a bad record becomes a
    /// rejection. Thread-safe: the bulk and urgent intakes call it concurrently.
    func handle(_ record: KafkaRecord, lane: SendLane = .bulk) {
        handle([decode(record)], started: [true], lane: lane)
    }

    /// Starts the work of the decoded records whose `started` element is true (started with the
    /// consumer), in `lane`: rejections are published, and the device-token jobs go to each app's
    /// APNs client in one hand-over.
    func handle(_ records: [DecodedRecord], started: [Bool], lane: SendLane = .bulk) {
        let received = MonotonicInstant.now
        var pending = PendingSubmissions()
        var groups = JobGroupDrafts()
        // Each record read in place through the buffer (the array's subscript copied it, a
        // retain and a release of each of its fields).
        records.withUnsafeBufferPointer { records in
            // The run's jobs and notifications enter the gate together: two atomic additions for
            // the run rather than two per job (each contended by the event loops' releases).
            var jobs = 0
            var notifications = 0
            for index in records.indices where started[index] {
                jobs += 1
                notifications += records[index].weight
            }
            gate.jobsStarted(jobs)
            gate.add(notifications, lane: lane)
            for index in records.indices where started[index] {
                begin(
                    records.baseAddress! + index,
                    received: received,
                    lane: lane,
                    pending: &pending,
                    groups: &groups,
                    // A run of one (the urgent intake's) keeps a progress of its own: a group of one
                    // would cost more objects, not fewer.
                    runRemaining: records.count > 1 ? records.count - index : 0
                )
            }
        }
        for draft in groups.takeAll() {
            seal(draft, lane: lane, received: received, pending: &pending)
        }
        // Popped, so each app's submissions reach its client as the only reference.
        var apps = pending.takeAll()
        while let (app, submissions) = apps.popLast() {
            client(of: app).send(contentsOf: submissions)
        }
    }

    /// A started record: rejected, or its job started. Read through a pointer, field by field:
    /// a record read whole out of the buffer was copied (and destroyed after), about 0.5% of the
    /// worker at one token per job.
    private func begin(
        _ decoded: UnsafePointer<DecodedRecord>,
        received: MonotonicInstant,
        lane: SendLane,
        pending: inout PendingSubmissions,
        groups: inout JobGroupDrafts,
        runRemaining: Int
    ) {
        let id = decoded.pointee.record.id
        let source = RecordSource(id)
        switch decoded.pointee.job {
        case .failure(let rejection):
            reject(decoded.pointee.record, source: source, rejection: rejection)
        case .success(let job):
            start(
                job,
                id: id,
                source: source,
                received: received,
                lane: lane,
                producedAt: decoded.pointee.record.timestampMilliseconds,
                pending: &pending,
                groups: &groups,
                runRemaining: runRemaining
            )
        }
    }

    private func client(of app: String) -> APNSClient {
        guard let client = clients[app] else {
            // The decoder only accepts configured apps; this cannot happen unless they diverge.
            preconditionFailure("a job names app '\(app)' with no APNs client")
        }
        return client
    }

    // MARK: Rejected jobs

    private func reject(_ record: KafkaRecord, source: RecordSource, rejection: JobRejection) {
        metrics.rejected(code: rejection.code.rawValue)
        logger.notice(
            "job rejected",
            metadata: ["source": "\(record.id)", "error": "\(rejection)", "job_id": "\(rejection.jobID ?? "-")"]
        )
        let error = rejection.description
        let result = ResultRecord.rejected(.init(jobID: rejection.jobID, error: error, source: source, meta: rejection.meta))
        let id = record.id
        let countdown = Countdown(2) { [recordEnded, gate] in
            recordEnded(id, 0, true)
            gate.jobEnded(notifications: 0)
        }
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

    /// Starts a decoded job: an expired one ends at once, a broadcast is sent, and a
    /// device-token job's batch joins `pending` (a single-token job's through its app's group in
    /// `groups`). `runRemaining`: the run's records from this one on, or 0 when the run makes no
    /// groups.
    private func start(
        _ job: Job,
        id: RecordID,
        source: RecordSource,
        received: MonotonicInstant,
        lane: SendLane,
        producedAt: Int64?,
        pending: inout PendingSubmissions,
        groups: inout JobGroupDrafts,
        runRemaining: Int
    ) {
        // The device tokens, or a broadcast's one channel: one request and one delivery each (in
        // the gate already: `handle` adds the run's).
        let count = job.recipientCount
        let options = sendOptions(for: job, lane: lane, group: id.generation)
        let expired = options.deadline.map { $0 <= .now } ?? false
        if job.channelID == nil, !expired, count == 1, runRemaining > 0 {
            // A single-token job joins its app's group: no progress object of its own, and its
            // request batch is made with the group's (`seal`).
            let member = JobGroupMember(id: id, job: job, producedAt: producedAt)
            if let full = groups.add(consume member, app: job.app, options: options, expected: runRemaining) {
                seal(full, lane: lane, received: received, pending: &pending)
            }
            return
        }
        // Device tokens go as one batch for the job (the tokens' bytes, a block of ids), no
        // notification value per token; made before the progress, which keeps its ids.
        let batch = job.channelID == nil && !expired ? job.notificationBatch(ids: ids) : nil
        // Every delivery record of the job has the job id as its key (written from `job.id`, no
        // copy kept), and the same job id, app and source in its value: made once for all of them
        // (a group's member makes its one record's template when it writes it).
        let template = DeliveryRecordTemplate(
            jobID: job.id,
            app: job.app,
            source: source,
            broadcast: job.channelID != nil,
            meta: job.meta,
            records: count
        )
        // A group looks its app's and lane's metrics up once for all its members (`seal`); a job
        // of its own, here.
        let shared = JobRecordsContext(
            template: template,
            appMetrics: self.appMetrics[job.app] ?? metrics.app(job.app),
            received: received
        )
        let progress = JobProgress(
            id: id,
            job: job,
            source: source,
            lane: lane,
            laneMetrics: metrics.lane(lane),
            producedAt: producedAt,
            shared: shared,
            requestIDs: batch?.ids,
            pipeline: self
        )
        if expired {
            // Past its deadline already: every token ends expired, never sent.
            let expired = APNSOutcome(noResponse: .expired, attempts: 0, latencyMilliseconds: 0)
            // One run: all at one moment (the clocks are read once for the job), produced together.
            publisher.withBatch { _ in
                for index in 0..<count { finish(progress, index: index, apnsID: nil, outcome: expired) }
            }
            return
        }
        guard let batch else {
            // A broadcast: one notification.
            let sent = job.broadcastNotifications(bundleID: decoder.bundleIDs[job.app] ?? "", ids: ids)
            client(of: job.app).send(sent, options: options) { [self] index, outcome in
                finish(progress, index: index, apnsID: .text(sent[index].apnsID), outcome: outcome)
            }
            return
        }
        // The progress hears each token's outcome (`tokenEnded`): no closure per job.
        pending.add(APNSBatchSubmission(batch: batch, options: options, observer: progress), app: job.app)
    }

    /// Token `index` of a device-token job has its final outcome. APNs echoes the request's id
    /// (nil in the answer) or gives another.
    func tokenEnded(_ progress: JobProgress, index: Int, outcome: APNSOutcome) {
        finish(progress, index: index, apnsID: progress.requestIDs.map { .block($0, index: index) }, outcome: outcome)
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
        // Its notifications leave the count when the job does: the consumer counts a completed
        // job's weight as uncommitted from here until the commit.
        gate.jobEnded(notifications: progress.weight, lane: progress.lane)
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

    /// A token's final outcome: publish its records (`OutcomeRecords` decides which); the token
    /// leaves the in-flight count when Kafka has them all.
    private func finish(_ progress: JobProgress, index: Int, apnsID: RecordAPNSID?, outcome: APNSOutcome) {
        if Self.isAbandoned(outcome) {
            // The pool shut down before a final answer, or a revoke withdrew the token's request:
            // nothing is published, and the job is never completed, so the group's next owner
            // sends it again. The token leaves the in-flight count all the same.
            progress.tokenAbandoned()
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
        // wait in this thread's batch (or another's): it counts once they are produced.
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

    /// Every token of the job has its final outcome and its records on their way: the job's
    /// `job_done` follows them, keyed by job id like its deliveries (the same partition, after
    /// them), and the job is complete once Kafka has it.
    func publishSummary(_ summary: ResultRecord.JobDone, progress: JobProgress) {
        // Its acknowledgement ends the job's last count like a token's does: the job's progress
        // is its delivery too (no object of its own).
        publisher.publish(to: topics.results, key: progress.job.id, token: progress, estimate: summary.estimate) {
            summary.write(into: &$0)
        }
    }
}
