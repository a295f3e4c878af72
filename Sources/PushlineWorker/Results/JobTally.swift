import PushlineAPNSCore

/// A job's final outcomes so far, summed for its `job_done` record. Pure: the pipeline adds each
/// token's outcome as it comes and asks for the record after the last.
struct JobTally: Sendable, Hashable {
    /// By status and reason, in the order first seen (a job has few distinct outcomes).
    private(set) var counts: [ResultRecord.JobDone.Count] = []
    private(set) var attempts = 0
    private(set) var heldMilliseconds: Double?
    private(set) var firstSent: Int64?
    private(set) var lastAnswer: Int64?
    /// The tokens added so far.
    private(set) var outcomes = 0
    /// The first two latencies; with no more, the p50 is the smaller one and no array is needed
    /// (a single-token job's tally allocates nothing for its latency).
    private var firstLatency = 0.0
    private var secondLatency = 0.0
    /// Every latency, once there are more than two (for the p50).
    private var latencies: [Double] = []
    private var latencyMax = 0.0

    /// The counts of one delivered notification (a single-token job's, mostly), made once.
    private static let oneDelivered: [ResultRecord.JobDone.Count] = [.init(status: 200, reason: nil, count: 1)]

    init(expected: Int = 0) {
        if expected > 2 { latencies.reserveCapacity(expected) }
    }

    /// A token's final `outcome`, answered at `answeredAt` (unix ms).
    mutating func add(_ outcome: APNSOutcome, answeredAt: Int64) {
        add(
            status: outcome.status,
            reason: outcome.reasonString,
            attempts: outcome.attempts,
            latencyMilliseconds: outcome.latencyMilliseconds,
            heldMilliseconds: outcome.heldMilliseconds,
            answeredAt: answeredAt
        )
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
        } else if counts.isEmpty && status == 200 && reason == nil {
            // A single-token job's usual tally: one shared array, no allocation of its own.
            counts = Self.oneDelivered
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
        latencyMax = outcomes == 0 ? latencyMilliseconds : max(latencyMax, latencyMilliseconds)
        switch outcomes {
        case 0: firstLatency = latencyMilliseconds
        case 1: secondLatency = latencyMilliseconds
        case 2:
            latencies.append(firstLatency)
            latencies.append(secondLatency)
            latencies.append(latencyMilliseconds)
        default: latencies.append(latencyMilliseconds)
        }
        outcomes += 1
    }

    /// The lower middle latency of an even count: a latency some token had. Up to two, that is
    /// the smaller one, found without a sorted copy.
    private var latencyP50: Double {
        switch outcomes {
        case 0: 0
        case 1: firstLatency
        case 2: min(firstLatency, secondLatency)
        default: latencies.sorted()[(outcomes - 1) / 2]
        }
    }

    /// The `job_done` record of `job` (read from `source`) after its last outcome; `tokens`: the
    /// record's tokens when `job` holds only some of them (a resumed job, `ResumedJob`).
    func record(for job: Job, source: RecordSource, tokens: Int? = nil) -> ResultRecord.JobDone {
        ResultRecord.JobDone(
            jobID: job.id,
            app: job.app,
            recipients: job.channelID.map { .channel($0) } ?? .tokens(tokens ?? job.deviceTokens.count),
            counts: counts.count < 2 ? counts : counts.sorted { ($0.status, $0.reason ?? "") < ($1.status, $1.reason ?? "") },
            attempts: attempts,
            heldMilliseconds: heldMilliseconds,
            firstSent: firstSent,
            lastAnswer: lastAnswer ?? 0,
            latencyP50Milliseconds: latencyP50,
            latencyMaxMilliseconds: latencyMax,
            source: source,
            echo: job.echo
        )
    }
}
