import PushlineTestSupport
import Synchronization
import Testing

@testable import PushlineWorker

@Suite(.timeLimit(.minutes(1))) struct ChangeSignalTests {
    @Test func aSignalAfterTheLookIsNotLost() async {
        let signal = ChangeSignal()
        let seen = signal.generation
        signal.signal()
        // Returns at once: the generation moved on after `seen`.
        await signal.wait(after: seen)
        #expect(signal.generation == seen + 1)
        #expect(signal.parkedWaiters == 0, "it never parked")
    }

    @Test func aSignalWakesEveryWaiter() async throws {
        let signal = ChangeSignal()
        let seen = signal.generation
        let returned = Returned()
        let waiters = (0..<5).map { _ in
            Task {
                await signal.wait(after: seen)
                returned.count.wrappingAdd(1, ordering: .relaxed)
            }
        }
        try await waitUntil("five waiters parked") { signal.parkedWaiters == 5 }
        #expect(returned.count.load(ordering: .relaxed) == 0, "nobody returns before the signal")
        signal.signal()
        for waiter in waiters { await waiter.value }
        #expect(returned.count.load(ordering: .relaxed) == 5)
        #expect(signal.parkedWaiters == 0)
    }

    @Test func cancellationEndsAWait() async throws {
        let signal = ChangeSignal()
        let seen = signal.generation
        let waiter = Task { await signal.wait(after: seen) }
        try await waitUntil("the waiter parked") { signal.parkedWaiters == 1 }
        waiter.cancel()
        await waiter.value
        #expect(signal.parkedWaiters == 0, "cancelled and gone")
        #expect(signal.generation == seen, "it ended without a signal")
    }

    @Test func aPassedDeadlineEndsAWait() async {
        let signal = ChangeSignal()
        let seen = signal.generation
        await signal.wait(after: seen, until: .now)
        #expect(signal.generation == seen, "it ended without a signal")
        #expect(signal.parkedWaiters == 0)
    }

    /// How many waiters returned.
    final class Returned: Sendable {
        let count = Atomic<Int>(0)
    }
}
