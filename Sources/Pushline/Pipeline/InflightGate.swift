import Synchronization

/// Bounds the notifications in flight: `acquire` suspends the consumer loop while the count is at
/// `limit`, and wakes it when releases bring the count down to `lowWater`.
///
/// The consumer pauses its partitions while it waits, so the backlog stays in Kafka, not in memory.
final class InflightGate: Sendable {
    let limit: Int
    let lowWater: Int

    private struct State {
        var count = 0
        var waiter: CheckedContinuation<Void, Never>?
        var closed = false
    }

    private let state = Mutex(State())

    init(limit: Int, lowWaterFraction: Double = 0.75) {
        self.limit = max(1, limit)
        self.lowWater = max(0, Int(Double(max(1, limit)) * lowWaterFraction))
    }

    var count: Int { state.withLock { $0.count } }

    /// Whether a new job would have to wait.
    var isFull: Bool { state.withLock { $0.count >= limit && !$0.closed } }

    /// Adds `n` in-flight notifications (a job's tokens are admitted whole, so one job may take
    /// the count past `limit` by at most its own size).
    func add(_ n: Int) {
        state.withLock { $0.count += n }
    }

    /// Waits up to `timeout` for room below `limit`; true when there is (or the gate closed),
    /// false when the wait timed out.
    func waitForRoom(timeout: Duration) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if state.withLock({ $0.count < limit || $0.closed }) { return true }
            try? await Task.sleep(for: .milliseconds(2))
        }
        return state.withLock { $0.count < limit || $0.closed }
    }

    /// Waits until the count is below `limit` (returns at once after `close`).
    func waitForRoom() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumeNow = state.withLock { state -> Bool in
                if state.count < limit || state.closed { return true }
                state.waiter = continuation
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }

    func release(_ n: Int) {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.count -= n
            guard state.count <= lowWater, let waiter = state.waiter else { return nil }
            state.waiter = nil
            return waiter
        }
        waiter?.resume()
    }

    /// Wakes a waiter for good (shutdown).
    func close() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.closed = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }
}
