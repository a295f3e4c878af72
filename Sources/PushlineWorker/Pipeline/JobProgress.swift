import PushlineAPNS
import Synchronization

/// One job's tokens on their way out: a token leaves the in-flight gate when Kafka has its
/// records, and the job is done when its last token is.
///
/// One object per job; `tokenAcknowledged` is what each token's last acknowledgement calls, so a
/// token with one record needs no counter (and no closure) of its own.
final class JobProgress: Sendable {
    private let remaining: Atomic<Int>
    private let gate: InflightGate
    private let lane: SendLane
    private let done: @Sendable () -> Void

    init(tokens: Int, gate: InflightGate, lane: SendLane = .bulk, done: @escaping @Sendable () -> Void) {
        precondition(tokens > 0)
        self.remaining = Atomic(tokens)
        self.gate = gate
        self.lane = lane
        self.done = done
    }

    /// A token that will get no record here (its pool shut down first): it leaves the in-flight
    /// count, and the job is never done, so its offset is never completed.
    func tokenAbandoned() {
        gate.release(1, lane: lane)
    }

    func tokenAcknowledged() {
        gate.release(1, lane: lane)
        if remaining.wrappingSubtract(1, ordering: .acquiringAndReleasing).newValue == 0 {
            done()
        }
    }
}
