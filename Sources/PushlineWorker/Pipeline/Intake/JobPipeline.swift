import Logging
import PushlineAPNS
import PushlineAPNSCore
import PushlineKafka

/// The worker's hot path: one job record in, one APNs request per token, the records of each
/// token's outcome (`OutcomeRecords`) and the job's `job_done` out, and the record's offset
/// completed once every one of them is acknowledged by Kafka.
///
/// This type is the intake: it decodes records, starts their jobs (a `JobProgress` per job, a
/// `JobGroupProgress` per group of single-token jobs) and hands their requests to each app's
/// APNs client (`NotificationSender`). The outcomes flow one way from there: progress ->
/// `JobResults` (records, published through the `ResultPublisher`) -> Kafka's acknowledgements ->
/// progress -> `JobRelease` (the record completed for commit, the gate released).
///
/// Called from the consumer loop (`handle`), the bulk and urgent intakes concurrently; immutable
/// but for the in-flight gate (atomics) and the id generator (atomic).
final class JobPipeline: Sendable {
    typealias Topics = JobResults.Topics

    private let decoder: JobDecoder
    private let clients: [String: any NotificationSender]
    /// Each configured app's metrics, resolved once (the decoder accepts only configured apps).
    let appMetrics: [String: WorkerMetrics.AppMetrics]
    /// Each app's part of the in-flight window; empty in a worker with one app (`AppWindow`).
    let appLoads: [String: AppLoad]
    /// The publishing side: what each outcome's records are, and their publishing.
    let results: JobResults
    var gate: InflightGate { results.release.gate }
    let metrics: WorkerMetrics
    /// Where every request's `apns-id` comes from (a job reserves a block, a group one for all).
    let ids = APNSIDGenerator()
    /// How long notifications waited before their first send (the window controller reads it).
    var queueDelays: QueueDelayMeter { results.queueDelays }
    /// What is cancelled (the control topic's reader applies changes to it): a cancelled job is
    /// finalised at intake without a request, and each cancel sweeps the pools (`sweepCancelled`).
    let cancellations: Cancellations

    init(
        decoder: JobDecoder,
        clients: [String: any NotificationSender],
        publisher: ResultPublisher,
        topics: Topics,
        invalidateOn: [String],
        results: ResultsMode = .full,
        gate: InflightGate,
        window: AppWindow? = nil,
        metrics: WorkerMetrics,
        logger: Logger,
        wallClockMilliseconds: @escaping @Sendable () -> Int64 = WallClock.milliseconds,
        complete: @escaping @Sendable (RecordID, Int) -> Void,
        completeAll: @escaping @Sendable ([(id: RecordID, weight: Int)]) -> Void,
        abandon: @escaping @Sendable (RecordID, ResumedJob?) -> Void = { _, _ in },
        parker: JobParker? = nil,
        cancellations: Cancellations? = nil
    ) {
        self.decoder = decoder
        self.cancellations = cancellations ?? Cancellations(logger: logger, wallClockMilliseconds: wallClockMilliseconds)
        self.clients = clients
        self.appMetrics = Dictionary(uniqueKeysWithValues: clients.keys.map { ($0, metrics.app($0)) })
        self.appLoads = window?.loads ?? [:]
        self.metrics = metrics
        let release = JobRelease(
            gate: gate,
            metrics: metrics,
            wallClockMilliseconds: wallClockMilliseconds,
            complete: complete,
            completeAll: completeAll,
            abandon: abandon,
            parker: parker
        )
        self.results = JobResults(
            publisher: publisher,
            topics: topics,
            release: release,
            rules: OutcomeRules(mode: results, invalidateOn: invalidateOn),
            environments: clients.mapValues { $0.apnsEnvironment },
            metrics: metrics,
            logger: logger,
            wallClockMilliseconds: wallClockMilliseconds
        )
        self.cancellations.onCancel { [weak self] in self?.sweepCancelled() }
    }

    /// Decodes one record (pure: nothing starts). A record the consumer's poll thread read
    /// (`JobRecordReader`) carries its job already; the others are decoded from their bytes.
    func decode(_ record: KafkaRecord) -> DecodedRecord {
        Self.decode(record, with: decoder)
    }

    static func decode(_ record: KafkaRecord, with decoder: JobDecoder) -> DecodedRecord {
        // Nil for every record but those a lost assignment kept: no cast on the hot path.
        guard let resumed = record.resumed, let kept = resumed as? ResumedJob else { return decodeWhole(record, with: decoder) }
        return decodeWhole(record, with: decoder).resuming(kept)
    }

    /// `decode` without what a lost assignment kept of the record.
    private static func decodeWhole(_ record: KafkaRecord, with decoder: JobDecoder) -> DecodedRecord {
        if let box = record.reading as? Job.Box {
            return DecodedRecord(record: record, job: .success(Job(box: box)))
        }
        if let kept = record.reading as? KeptJobRecord {
            return DecodedRecord(record: record, job: .success(Job(box: kept.job)), original: kept.bytes)
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
        // Read before any job is checked: a cancel applied after this sweeps again once the run's
        // requests are in the pools (below). Nothing cancelled: no job is checked.
        let cancelEpoch = cancellations.epoch
        let checkCancels = cancellations.any
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
            if !appLoads.isEmpty {
                // Each app's part, before any of the run's work can end.
                for index in records.indices where started[index] {
                    guard case .success(let job) = records[index].job, let load = appLoads[job.app] else { continue }
                    gate.addAppPart(job.recipientCount, app: load)
                }
            }
            for index in records.indices where started[index] {
                begin(
                    records.baseAddress! + index,
                    received: received,
                    lane: lane,
                    pending: &pending,
                    groups: &groups,
                    checkCancels: checkCancels,
                    // A run of one (the urgent intake's) makes no group (`JobStart`).
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
        cancellations.sweepIfChanged(since: cancelEpoch)
    }

    /// Ends, in every app's pool, the requests of cancelled jobs that have not gone out (after
    /// each cancel; `APNSClient.cancel(where:)`).
    func sweepCancelled() {
        let filter: APNSCancelFilter = { [cancellations] key in cancellations.isCancelled(key) }
        for client in clients.values { client.cancel(where: filter) }
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
        checkCancels: Bool,
        runRemaining: Int
    ) {
        let id = decoded.pointee.record.id
        switch decoded.pointee.job {
        case .failure(let rejection):
            results.reject(decoded.pointee.record, source: decoded.pointee.source ?? RecordSource(id), rejection: rejection)
        case .success(let job):
            // With several apps a job keeps its record's bytes, to be parked if its app is held
            // in a revoke, and its first source when it was read back from the deferred topic.
            let copy =
                appLoads.isEmpty
                ? nil : ParkingCopy(bytes: decoded.pointee.original ?? decoded.pointee.record.value, firstSource: decoded.pointee.source)
            start(
                job,
                id: id,
                source: decoded.pointee.source ?? RecordSource(id),
                received: received,
                lane: lane,
                producedAt: decoded.pointee.record.timestampMilliseconds,
                parkingCopy: copy,
                resumed: decoded.pointee.resumed,
                pending: &pending,
                groups: &groups,
                cancelled: checkCancels && cancellations.isCancelled(job),
                runRemaining: runRemaining
            )
        }
    }

    private func client(of app: String) -> any NotificationSender {
        guard let client = clients[app] else {
            // The decoder only accepts configured apps; this cannot happen unless they diverge.
            preconditionFailure("a job names app '\(app)' with no APNs client")
        }
        return client
    }

    // MARK: Jobs

    /// Starts a decoded job as `JobStart.decide` says: ended at once unsent (expired, cancelled,
    /// a plain rehearsal), a member of its app's group (its request batch made with the group's in
    /// `seal`), a personalised job (rendered first), a broadcast, or a batch of its own; requests
    /// join `pending`. `runRemaining`: the run's records from this one on, or 0 when the run makes
    /// no groups.
    private func start(
        _ job: Job,
        id: RecordID,
        source: RecordSource,
        received: MonotonicInstant,
        lane: SendLane,
        producedAt: Int64?,
        parkingCopy: ParkingCopy?,
        resumed: ResumedJob?,
        pending: inout PendingSubmissions,
        groups: inout JobGroupDrafts,
        cancelled: Bool,
        runRemaining: Int
    ) {
        let options = sendOptions(for: job, lane: lane, group: id.generation)
        let context = JobStart.Context(
            expired: options.deadline.map { $0 <= .now } ?? false,
            cancelled: cancelled,
            runMakesGroups: runRemaining > 0,
            resumed: resumed != nil
        )
        let decision = JobStart.decide(job, context)
        if decision == .joinsGroup {
            // No progress object of its own; its request batch is made with the group's (`seal`).
            let member = JobGroupMember(id: id, job: job, producedAt: producedAt, parkingCopy: parkingCopy)
            if let full = groups.add(consume member, app: job.app, options: options, expected: runRemaining) {
                seal(full, lane: lane, received: received, pending: &pending)
            }
            return
        }
        // Device tokens go as one batch for the job (the tokens' bytes, a block of ids), no
        // notification value per token; made before the progress, which keeps its ids. A
        // personalised job's ids are reserved here, one per token, and its requests made once its
        // payloads are rendered (`startPersonalised`).
        let count = job.recipientCount
        var batch: APNSNotificationBatch?
        var personalIDs: APNSIDBlock?
        switch decision {
        case .ownBatch: batch = job.notificationBatch(ids: ids)
        case .personalised: personalIDs = ids.reserve(count)
        case .unsent, .broadcast, .joinsGroup: break
        }
        let progress = JobProgress(
            id: id,
            job: job,
            source: source,
            lane: lane,
            laneMetrics: metrics.lane(lane),
            producedAt: producedAt,
            shared: recordsContext(of: job, source: source, received: received),
            requestIDs: batch?.ids ?? personalIDs,
            original: parkingCopy?.bytes,
            resumedFrom: resumed,
            results: results
        )
        switch decision {
        case .unsent(let reason):
            results.unsent(progress, indices: 0..<count, reason: reason)
        case .personalised(let dryRun):
            guard let personalisation = job.personalisation, let personalIDs else { preconditionFailure("a personalised job") }
            startPersonalised(
                job,
                personalisation,
                ids: personalIDs,
                progress: progress,
                options: options,
                dryRun: dryRun,
                pending: &pending
            )
        case .broadcast:
            let sent = job.broadcastNotifications(bundleID: decoder.bundleIDs[job.app] ?? "", ids: ids)
            client(of: job.app).send(
                sent,
                options: options,
                observer: BroadcastObserver(progress: progress, apnsIDs: sent.map(\.apnsID), results: results)
            )
        case .ownBatch:
            // The progress hears each token's outcome (`tokenEnded`): no closure per job.
            pending.add(APNSBatchSubmission(batch: batch!, options: options, observer: progress), app: job.app)
        case .joinsGroup:
            preconditionFailure("a group's member has no progress of its own")
        }
    }

    /// What every record of a job of its own shares: its delivery records' template (the job id
    /// as their key, no copy kept; the same job id, app and source in each value), its app's
    /// metrics and part of the window (a group looks them up once for all its members: `seal`).
    private func recordsContext(of job: Job, source: RecordSource, received: MonotonicInstant) -> JobRecordsContext {
        JobRecordsContext(
            template: DeliveryRecordTemplate(
                jobID: job.id,
                app: job.app,
                source: source,
                broadcast: job.channelID != nil,
                echo: job.echo,
                records: job.recipientCount
            ),
            appMetrics: self.appMetrics[job.app] ?? metrics.app(job.app),
            load: appLoads.isEmpty ? nil : appLoads[job.app],
            received: received
        )
    }

    /// A personalised job's start: every token's payload rendered once; the tokens that cannot be
    /// rendered (a variable missing, a payload too large) end at once, each with its own record, and
    /// the others' requests join `pending` (a dry run's end `dry_run` there instead).
    private func startPersonalised(
        _ job: Job,
        _ personalisation: Personalisation,
        ids: APNSIDBlock,
        progress: JobProgress,
        options: APNSSendOptions,
        dryRun: Bool,
        pending: inout PendingSubmissions
    ) {
        let rendered = personalisation.render(limit: job.pushType.maxPayloadBytes)
        if !rendered.missing.isEmpty {
            results.unsent(progress, indices: rendered.missing, reason: .missingVariable)
        }
        if !rendered.tooLarge.isEmpty {
            results.unsent(progress, indices: rendered.tooLarge, reason: .payloadTooLarge)
        }
        if dryRun {
            results.unsent(progress, indices: rendered.runs.flatMap(\.tokens), reason: .dryRun)
            return
        }
        for submission in job.personalisedSubmissions(rendered, ids: ids, options: options, observer: progress) {
            pending.add(submission, app: job.app)
        }
    }

    /// The job's deadline and the last moment a retry may start, as monotonic instants; `group`
    /// is its partition's assignment generation, which a revoke may withdraw.
    private func sendOptions(for job: Job, lane: SendLane, group: UInt64) -> APNSSendOptions {
        guard job.deadlineMilliseconds != nil || job.expiration != nil else { return APNSSendOptions(lane: lane, group: group) }
        let nowWall = results.wallClockMilliseconds()
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
}
