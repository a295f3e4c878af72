/// A job's final outcomes so far, summed for its `job_done` record. Pure: the pipeline adds each
/// token's outcome as it comes and asks for the record after the last.
struct JobTally: Sendable, Hashable {
    /// By status and reason, in the order first seen (a job has few distinct outcomes).
    private(set) var counts: [ResultRecord.JobDone.Count] = []
    private(set) var attempts = 0
    private(set) var heldMilliseconds: Double?
    private(set) var firstSent: Int64?
    private(set) var lastAnswer: Int64?
    private(set) var latencies: [Double] = []

    init(expected: Int = 0) {
        // One token's first append allocates no more than a reservation would.
        if expected > 1 { latencies.reserveCapacity(expected) }
    }

    /// One token's final outcome, answered at `answeredAt` (unix ms). A token with no attempt
    /// (expired before its send) has no send time.
    mutating func add(
        status: Int,
        reason: String?,
        attempts: Int,
        latencyMilliseconds: Double,
        heldMilliseconds: Double?,
        answeredAt: Int64
    ) {
        if let index = counts.firstIndex(where: { $0.status == status && $0.reason == reason }) {
            counts[index].count += 1
        } else {
            counts.append(.init(status: status, reason: reason, count: 1))
        }
        self.attempts += attempts
        if let heldMilliseconds {
            self.heldMilliseconds = max(self.heldMilliseconds ?? 0, heldMilliseconds)
        }
        if attempts > 0 {
            let sent = answeredAt - Int64(latencyMilliseconds.rounded())
            firstSent = min(firstSent ?? sent, sent)
        }
        lastAnswer = max(lastAnswer ?? answeredAt, answeredAt)
        latencies.append(latencyMilliseconds)
    }

    /// The tokens added so far.
    var outcomes: Int { latencies.count }

    /// The `job_done` record of `job` (read from `source`) after its last outcome.
    func record(for job: Job, source: RecordSource) -> ResultRecord.JobDone {
        // The lower middle one of an even count: a latency some token had. Up to two latencies,
        // that is the smaller one, found without a sorted copy (a single-token job has one).
        var p50 = latencies.min() ?? 0
        if latencies.count > 2 { p50 = latencies.sorted()[(latencies.count - 1) / 2] }
        return ResultRecord.JobDone(
            jobID: job.id,
            app: job.app,
            recipients: job.channelID.map { .channel($0) } ?? .tokens(job.deviceTokens.count),
            counts: counts.count < 2 ? counts : counts.sorted { ($0.status, $0.reason ?? "") < ($1.status, $1.reason ?? "") },
            attempts: attempts,
            heldMilliseconds: heldMilliseconds,
            firstSent: firstSent,
            lastAnswer: lastAnswer ?? 0,
            latencyP50Milliseconds: p50,
            latencyMaxMilliseconds: latencies.max() ?? 0,
            source: source,
            meta: job.meta
        )
    }
}
