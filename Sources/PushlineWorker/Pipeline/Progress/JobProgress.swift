import PushlineAPNS
import PushlineAPNSCore
import PushlineKafka

/// One job's tokens on their way out: a token leaves the in-flight gate when Kafka has its
/// records (or when it is abandoned), and the job ends once its `job_done` record is safe too:
/// done, or abandoned (and then without a `job_done`) when any token was.
///
/// One object per job of several tokens, a broadcast or an expired job (single-token jobs go in
/// groups: `JobGroupProgress`), which also carries what the job's end reports (record id, weight,
/// lane) and what its `job_done` says, so that ending a job needs no closure.
///
/// The flow is one way: the APNs client tells it a token's outcome (`notificationEnded`), which
/// it hands to `JobResults` (which publishes the token's records); the publisher asks it, once a
/// token's records are produced, what follows them (`tokensProduced`: the job's `job_done`, as a
/// value the publisher publishes); Kafka's acknowledgements count down here, and the last one
/// goes to `JobRelease`. It calls the publisher only as its records' delivery (`ResultDelivery`:
/// each report's `reportArrived`, an undelivered record's `undelivered`), which calls nothing
/// back. Its counts are a `JobCountdown`, whose events return what happened (the job's
/// `job_done` due, the job ended) for this to act on.
///
/// Explicitly synchronised (`@unchecked Sendable`): every stored property is immutable but the
/// countdown (atomics and a mutex). Called from the event loops (outcomes), the threads that end
/// a run of outcomes (`tokensProduced`), and the producer's poll thread or the retry loop
/// (acknowledgements).
final class JobProgress: ResultDelivery, APNSBatchObserver, @unchecked Sendable {
    let id: RecordID
    /// The job's notifications.
    let weight: Int
    let lane: SendLane
    let laneMetrics: WorkerMetrics.LaneMetrics
    /// When the job's record was produced (Kafka timestamp, wall-clock milliseconds), if known.
    let producedAt: Int64?
    let job: Job
    let source: RecordSource
    /// What each token's records share (made once per job): the delivery records' key and
    /// template, the app's metrics, and when the job's record arrived.
    let shared: JobRecordsContext
    /// The `apns-id`s of a device-token job's requests (nil for a broadcast).
    let requestIDs: APNSIDBlock?
    /// The job record's bytes, kept in a worker with several apps, where a held app's job
    /// withdrawn in a revoke is parked instead of given up; nil otherwise.
    let original: [UInt8]?
    /// What was kept of the job when an earlier run of it was given up with part of it done
    /// (`ResumedJob`): this run sends the rest, and its `job_done` counts the whole job; nil for
    /// a job run whole.
    let resumedFrom: ResumedJob?
    /// The counts of the job's end and its tally: each event returns what happened, acted on here.
    private let countdown: JobCountdown
    /// Where the tokens' outcomes go (downstream: it publishes their records).
    private let results: JobResults

    init(
        id: RecordID,
        job: Job,
        source: RecordSource,
        lane: SendLane,
        laneMetrics: WorkerMetrics.LaneMetrics,
        producedAt: Int64?,
        shared: JobRecordsContext,
        requestIDs: APNSIDBlock? = nil,
        original: [UInt8]? = nil,
        resumedFrom: ResumedJob? = nil,
        results: JobResults
    ) {
        self.original = original
        self.resumedFrom = resumedFrom
        let tokens = job.recipientCount
        self.id = id
        self.job = job
        self.source = source
        self.weight = tokens
        self.lane = lane
        self.laneMetrics = laneMetrics
        self.producedAt = producedAt
        self.shared = shared
        self.requestIDs = requestIDs
        self.countdown = JobCountdown(tokens: tokens, carried: resumedFrom?.tally)
        self.results = results
        super.init(publisher: results.publisher, topic: results.topics.results.name)
    }

    /// A device-token job's token `index` has its final outcome (the APNs client calls this).
    func notificationEnded(_ index: Int, outcome: APNSOutcome) {
        results.tokenEnded(self, index: index, outcome: outcome)
    }

    func cancelKey(_ index: Int) -> APNSCancelKey? { job.cancelKey }

    /// A token's final outcome, before its records are published: counted for `job_done`.
    func tokenFinal(_ outcome: APNSOutcome, answeredAt: Int64) {
        countdown.tokenFinal(outcome, answeredAt: answeredAt)
    }

    /// `count` tokens' records are produced (or they have none to produce): after the last token,
    /// the job's `job_done`, for the publisher to publish (nil before, and when a token was
    /// abandoned: the job then has no `job_done`).
    override func tokensProduced(_ count: Int) -> FollowingRecord? {
        switch countdown.tokensProduced(count) {
        case nil:
            return nil
        case .summaryDue:
            return FollowingRecord(
                topic: results.topics.results,
                key: job.id,
                summary: countdown.summary(for: job, source: source, tokens: resumedFrom?.tokens)
            )
        case .ended(let ending):
            end(ending)
            return nil
        }
    }

    /// A token that will get no record here (its pool shut down first, or its work was withdrawn
    /// in a revoke): it leaves the in-flight count, and the job is never done (no `job_done`).
    func tokenAbandoned(index: Int = 0, withdrawn: Bool = false) {
        if let ending = countdown.tokenAbandoned(index: index, withdrawn: withdrawn) { end(ending) }
    }

    /// What the job keeps, once it ended abandoned, to do only the rest of its work if its
    /// partition comes back to this worker after a lost assignment (`ResumedJob`); nil when it
    /// is done again whole.
    var resumable: ResumedJob? {
        guard job.channelID == nil, let (unanswered, tally) = countdown.resumable else { return nil }
        guard let resumedFrom else { return ResumedJob(unanswered: unanswered, tally: tally, tokens: weight) }
        return resumedFrom.again(unanswered: unanswered, tally: tally)
    }

    /// The bytes to park the job with, once it ended abandoned: when every token was withdrawn
    /// (none answered, none shut down) while its app is held, and the bytes were kept; nil
    /// otherwise (the job is given up, and its partition's next owner redoes it).
    var parkable: [UInt8]? {
        guard let original, countdown.everyTokenWithdrawn, shared.load?.isHeld == true else { return nil }
        return original
    }

    /// Kafka has a token's last record, or the job's `job_done` record (each is one of the
    /// acknowledgements the job waits for).
    override func acknowledged() {
        if let ending = countdown.acknowledged() { end(ending) }
    }

    /// Completed when every token's records and the job_done are in Kafka; given up when a token
    /// was abandoned (the job must not be completed: the group's next owner redoes it).
    private func end(_ ending: JobCountdown.Ending) {
        results.release.jobEnded(self, done: ending == .completed)
    }
}
