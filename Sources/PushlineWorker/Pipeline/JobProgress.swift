import PushlineAPNS
import PushlineAPNSCore
import PushlineKafka
import Synchronization

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
/// goes to `JobRelease`. It never calls the publisher.
///
/// Explicitly synchronised (`@unchecked Sendable`): every stored property is immutable, atomic or
/// under a mutex. Called from the event loops (outcomes), the threads that end a run of outcomes
/// (`tokensProduced`), and the producer's poll thread or the retry loop (acknowledgements).
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
    /// Acknowledgements still to come: one per token, and one for the `job_done` record (or for
    /// its absence, when a token was abandoned).
    private let remaining: Atomic<Int>
    /// Tokens whose outcome (final, or abandoned) is not known yet.
    private let undecided: Atomic<Int>
    private let abandoned = Atomic<Bool>(false)
    private let tally: Mutex<JobTally>
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
        results: JobResults
    ) {
        let tokens = job.recipientCount
        precondition(tokens > 0)
        self.id = id
        self.job = job
        self.source = source
        self.weight = tokens
        self.lane = lane
        self.laneMetrics = laneMetrics
        self.producedAt = producedAt
        self.shared = shared
        self.requestIDs = requestIDs
        self.remaining = Atomic(tokens + 1)
        self.undecided = Atomic(tokens)
        self.tally = Mutex(JobTally(expected: tokens))
        self.results = results
        super.init(publisher: results.publisher, topic: results.topics.results.name)
    }

    /// A device-token job's token `index` has its final outcome (the APNs client calls this).
    func notificationEnded(_ index: Int, outcome: APNSOutcome) {
        results.tokenEnded(self, index: index, outcome: outcome)
    }

    /// A token's final outcome, before its records are published: counted for `job_done`.
    func tokenFinal(_ outcome: APNSOutcome, answeredAt: Int64) {
        tally.withLock { $0.add(outcome, answeredAt: answeredAt) }
    }

    /// `count` tokens' records are produced (or they have none to produce): after the last token,
    /// the job's `job_done`, for the publisher to publish (nil before, and when a token was
    /// abandoned: the job then has no `job_done`).
    override func tokensProduced(_ count: Int) -> FollowingRecord? {
        guard undecided.wrappingSubtract(count, ordering: .acquiringAndReleasing).newValue == 0 else { return nil }
        if abandoned.load(ordering: .acquiring) {
            // No job_done: the group's next owner redoes the job.
            acknowledgementEnded()
            return nil
        }
        return FollowingRecord(
            topic: results.topics.results,
            key: job.id,
            summary: tally.withLock { $0.record(for: job, source: source) }
        )
    }

    /// A token that will get no record here (its pool shut down first, or its work was withdrawn
    /// in a revoke): it leaves the in-flight count, and the job is never done (no `job_done`).
    func tokenAbandoned() {
        abandoned.store(true, ordering: .releasing)
        _ = tokensProduced(1)
        acknowledgementEnded()
    }

    /// Kafka has a token's last record, or the job's `job_done` record (each is one of the
    /// acknowledgements the job waits for).
    override func acknowledged() {
        acknowledgementEnded()
    }

    private func acknowledgementEnded() {
        if remaining.wrappingSubtract(1, ordering: .acquiringAndReleasing).newValue == 0 {
            // True when every token's records and the job_done are in Kafka; false when a token
            // was abandoned (the job must not be completed: the group's next owner redoes it).
            results.release.jobEnded(self, done: !abandoned.load(ordering: .acquiring))
        }
    }
}
