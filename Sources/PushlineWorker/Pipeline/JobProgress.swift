import PushlineAPNS
import PushlineKafka
import Synchronization

/// One job's tokens on their way out: a token leaves the in-flight gate when Kafka has its
/// records (or when it is abandoned), and the job ends with its last token: done, or abandoned
/// when any token was.
///
/// One object per job, which also carries what the job's end reports (record id, weight, lane),
/// so that ending a job needs no closure. `tokenAcknowledged` is what each token's last
/// acknowledgement calls, so a token with one record needs no counter of its own.
final class JobProgress: Sendable {
    let id: RecordID
    /// The job's notifications.
    let weight: Int
    let lane: SendLane
    let laneMetrics: WorkerMetrics.LaneMetrics
    /// When the job's record was produced (Kafka timestamp, wall-clock milliseconds), if known.
    let producedAt: Int64?
    private let remaining: Atomic<Int>
    private let abandoned = Atomic<Bool>(false)
    private let pipeline: JobPipeline

    init(
        id: RecordID,
        tokens: Int,
        lane: SendLane,
        laneMetrics: WorkerMetrics.LaneMetrics,
        producedAt: Int64?,
        pipeline: JobPipeline
    ) {
        precondition(tokens > 0)
        self.id = id
        self.weight = tokens
        self.lane = lane
        self.laneMetrics = laneMetrics
        self.producedAt = producedAt
        self.remaining = Atomic(tokens)
        self.pipeline = pipeline
    }

    /// A token that will get no record here (its pool shut down first, or its work was withdrawn
    /// in a revoke): it leaves the in-flight count, and the job is never done.
    func tokenAbandoned() {
        abandoned.store(true, ordering: .releasing)
        tokenEnded()
    }

    func tokenAcknowledged() {
        tokenEnded()
    }

    private func tokenEnded() {
        pipeline.gate.release(1, lane: lane)
        if remaining.wrappingSubtract(1, ordering: .acquiringAndReleasing).newValue == 0 {
            // True when every token's records are in Kafka; false when a token was abandoned (the
            // job must not be completed: the group's next owner redoes it).
            pipeline.jobEnded(self, done: !abandoned.load(ordering: .acquiring))
        }
    }
}
