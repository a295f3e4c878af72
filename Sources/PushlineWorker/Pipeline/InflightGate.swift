import Synchronization

/// Bounds the notifications in flight: `acquire` suspends the consumer loop while the count is at
/// `limit`, and wakes it when releases bring the count down to `lowWater`.
///
/// The consumer pauses its partitions while it waits, so the backlog stays in Kafka, not in memory.
///
/// Every token of every job passes `add` and `release`, from the consumer and from the producer's
/// delivery thread: the count is an atomic, and the lock is taken only to park or wake the one
/// waiter (the consumer loop).
final class InflightGate: Sendable {
    let limit: Int
    let lowWater: Int

    private let inflight = Atomic<Int>(0)
    /// Set while the consumer is parked: releases look at it before taking the lock.
    private let waiting = Atomic<Bool>(false)
    private let closed = Atomic<Bool>(false)
    private let waiter = Mutex<CheckedContinuation<Void, Never>?>(nil)

    init(limit: Int, lowWaterFraction: Double = 0.75) {
        self.limit = max(1, limit)
        self.lowWater = max(0, Int(Double(max(1, limit)) * lowWaterFraction))
    }

    var count: Int { inflight.load(ordering: .sequentiallyConsistent) }

    private var hasRoom: Bool { count < limit || closed.load(ordering: .sequentiallyConsistent) }

    /// Whether a new job would have to wait.
    var isFull: Bool { !hasRoom }

    /// Adds `n` in-flight notifications (a job's tokens are admitted whole, so one job may take
    /// the count past `limit` by at most its own size).
    func add(_ n: Int) {
        inflight.wrappingAdd(n, ordering: .sequentiallyConsistent)
    }

    /// Waits up to `timeout` for room below `limit`; true when there is (or the gate closed),
    /// false when the wait timed out.
    func waitForRoom(timeout: Duration) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if hasRoom { return true }
            try? await Task.sleep(for: .milliseconds(2))
        }
        return hasRoom
    }

    /// Waits until the count is below `limit` (returns at once after `close`); once parked, it
    /// wakes when releases bring the count down to `lowWater`.
    func waitForRoom() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumeNow = waiter.withLock { parked -> Bool in
                if hasRoom { return true }
                parked = continuation
                waiting.store(true, ordering: .sequentiallyConsistent)
                // A release between the check above and the store would not have seen `waiting`:
                // look again now that it is set.
                if count <= lowWater || closed.load(ordering: .sequentiallyConsistent) {
                    parked = nil
                    waiting.store(false, ordering: .sequentiallyConsistent)
                    return true
                }
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }

    func release(_ n: Int) {
        let now = inflight.wrappingSubtract(n, ordering: .sequentiallyConsistent).newValue
        guard now <= lowWater, waiting.load(ordering: .sequentiallyConsistent) else { return }
        wake()
    }

    /// Wakes a waiter for good (shutdown).
    func close() {
        closed.store(true, ordering: .sequentiallyConsistent)
        wake()
    }

    private func wake() {
        let parked = waiter.withLock { parked -> CheckedContinuation<Void, Never>? in
            defer { parked = nil }
            waiting.store(false, ordering: .sequentiallyConsistent)
            return parked
        }
        parked?.resume()
    }
}
