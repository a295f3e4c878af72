import PushlineAPNS
import Synchronization

/// One job's tokens on their way out: a token leaves the in-flight gate when Kafka has its
/// records (or when it is abandoned), and the job ends with its last token: done, or abandoned
/// when any token was.
///
/// One object per job; `tokenAcknowledged` is what each token's last acknowledgement calls, so a
/// token with one record needs no counter (and no closure) of its own.
final class JobProgress: Sendable {
    private let remaining: Atomic<Int>
    private let abandoned = Atomic<Bool>(false)
    private let gate: InflightGate
    private let lane: SendLane
    /// Called once, with the last token: true when every token's records are in Kafka, false when
    /// some token was abandoned (the job must not be completed: the group's next owner redoes it).
    private let ended: @Sendable (_ done: Bool) -> Void

    init(tokens: Int, gate: InflightGate, lane: SendLane = .bulk, ended: @escaping @Sendable (_ done: Bool) -> Void) {
        precondition(tokens > 0)
        self.remaining = Atomic(tokens)
        self.gate = gate
        self.lane = lane
        self.ended = ended
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
        gate.release(1, lane: lane)
        if remaining.wrappingSubtract(1, ordering: .acquiringAndReleasing).newValue == 0 {
            ended(!abandoned.load(ordering: .acquiring))
        }
    }
}
