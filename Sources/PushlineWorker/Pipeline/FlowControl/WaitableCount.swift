import Synchronization

/// A count changed from any thread that tasks can wait on: `wait(atMost:)` suspends until the
/// count is at most a threshold.
///
/// `add` and `subtract` are atomics on the hot path; a subtraction takes the lock only when it
/// brings the count down to a threshold some task waits for (`wakeAt`). Waking is level-based and
/// free of lost wake-ups: a waiter publishes its threshold and then looks at the count again, a
/// subtraction changes the count and then looks at the published threshold (both sequentially
/// consistent), so at least one of the two sees the other.
final class WaitableCount: Sendable {
    private struct Waiter {
        var threshold: Int
        var continuation: CheckedContinuation<Bool, Never>
    }

    private struct Waiters {
        var parked: [UInt64: Waiter] = [:]
        var nextID: UInt64 = 0

        /// The largest threshold waited for, or `Int.min` when nobody waits.
        var wakeAt: Int { parked.values.map(\.threshold).max() ?? .min }

        /// Removes the waiters whose threshold `count` satisfies.
        mutating func satisfied(by count: Int) -> [CheckedContinuation<Bool, Never>] {
            let ids = parked.filter { count <= $0.value.threshold }.keys
            return ids.compactMap { parked.removeValue(forKey: $0)?.continuation }
        }
    }

    private let count: Atomic<Int>
    /// Mirrors `waiters.wakeAt`, so a subtraction that wakes nobody stays lock-free.
    private let wakeAt = Atomic<Int>(.min)
    private let waiters = Mutex(Waiters())

    init(_ initial: Int = 0) {
        self.count = Atomic(initial)
    }

    var value: Int { count.load(ordering: .sequentiallyConsistent) }

    /// Tasks parked in `wait(atMost:)` (a test waits for a task to park instead of sleeping).
    var parkedWaiters: Int { waiters.withLock { $0.parked.count } }

    func add(_ n: Int) {
        count.wrappingAdd(n, ordering: .sequentiallyConsistent)
    }

    func subtract(_ n: Int) {
        let now = count.wrappingSubtract(n, ordering: .sequentiallyConsistent).newValue
        guard now <= wakeAt.load(ordering: .sequentiallyConsistent) else { return }
        let woken = waiters.withLock { waiters in
            // The count read again under the lock: the smallest it has been is not needed, only
            // that it reached the threshold at some point, which `now` proves.
            defer { wakeAt.store(waiters.wakeAt, ordering: .sequentiallyConsistent) }
            return waiters.satisfied(by: now)
        }
        for continuation in woken { continuation.resume(returning: true) }
    }

    /// `wait(atMost:)`, for at most `patience`: true when the count got there, false when the
    /// patience ran out or the task was cancelled first.
    func wait(atMost threshold: Int, within patience: Duration) async -> Bool {
        if value <= threshold { return true }
        return await withTaskGroup(of: Bool.self) { group in
            group.addTask { await self.wait(atMost: threshold) }
            group.addTask {
                try? await Task.sleep(for: patience)
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
    }

    /// Suspends until the count is at most `threshold` (returns at once if it is); true then, false
    /// when the task was cancelled first.
    func wait(atMost threshold: Int) async -> Bool {
        if value <= threshold { return true }
        let id = waiters.withLock { waiters in
            defer { waiters.nextID += 1 }
            return waiters.nextID
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let result: Bool? = waiters.withLock { waiters in
                    // Cancelled before we could park: the handler already ran and found nothing.
                    if Task.isCancelled { return false }
                    waiters.parked[id] = Waiter(threshold: threshold, continuation: continuation)
                    wakeAt.store(waiters.wakeAt, ordering: .sequentiallyConsistent)
                    // A subtraction before the store above did not see our threshold: look again.
                    if value <= threshold {
                        waiters.parked[id] = nil
                        wakeAt.store(waiters.wakeAt, ordering: .sequentiallyConsistent)
                        return true
                    }
                    return nil
                }
                if let result { continuation.resume(returning: result) }
            }
        } onCancel: {
            let continuation = waiters.withLock { waiters in
                defer { wakeAt.store(waiters.wakeAt, ordering: .sequentiallyConsistent) }
                return waiters.parked.removeValue(forKey: id)?.continuation
            }
            continuation?.resume(returning: false)
        }
    }
}
