import PushlineAPNSCore
import Synchronization

/// "Something changed; look again": each `signal()` starts a new generation and resumes every task
/// waiting on an older one.
///
/// A waiter reads `generation`, looks at the state it cares about, and only then waits for a
/// generation after the one it read, so a change between the look and the wait is never lost.
final class ChangeSignal: Sendable {
    private struct State {
        var generation: UInt64 = 0
        var parked: [UInt64: CheckedContinuation<Void, Never>] = [:]
        var nextID: UInt64 = 0
    }

    private let state = Mutex(State())

    init() {}

    var generation: UInt64 { state.withLock { $0.generation } }

    /// Tasks parked in `wait(after:)` (a test waits for a task to park instead of sleeping).
    var parkedWaiters: Int { state.withLock { $0.parked.count } }

    func signal() {
        let woken = state.withLock { state in
            state.generation &+= 1
            defer { state.parked = [:] }
            return Array(state.parked.values)
        }
        for continuation in woken { continuation.resume() }
    }

    /// Returns once a generation after `seen` has started (at once if one has), or when the task is
    /// cancelled.
    func wait(after seen: UInt64) async {
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state in
                    if state.generation != seen || Task.isCancelled { return true }
                    state.parked[id] = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.parked.removeValue(forKey: id) }?.resume()
        }
    }

    /// Like `wait(after:)`, but returns at `deadline` at the latest (nil: no deadline).
    func wait(after seen: UInt64, until deadline: MonotonicInstant?) async {
        guard let deadline else { return await wait(after: seen) }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.wait(after: seen) }
            group.addTask { try? await Task.sleep(for: max(.zero, MonotonicInstant.now.duration(to: deadline))) }
            await group.next()
            group.cancelAll()
        }
    }
}
