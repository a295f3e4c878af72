import Testing

@testable import PushlineWorker

@Suite(.timeLimit(.minutes(1))) struct ChangeSignalTests {
    @Test func aSignalAfterTheLookIsNotLost() async {
        let signal = ChangeSignal()
        let seen = signal.generation
        signal.signal()
        // Returns at once: the generation moved on after `seen`.
        await signal.wait(after: seen)
        #expect(signal.generation != seen)
    }

    @Test func aSignalWakesEveryWaiter() async {
        let signal = ChangeSignal()
        let seen = signal.generation
        let waiters = (0..<5).map { _ in Task { await signal.wait(after: seen) } }
        signal.signal()
        for waiter in waiters { await waiter.value }
    }

    @Test func cancellationEndsAWait() async {
        let signal = ChangeSignal()
        let waiter = Task { await signal.wait(after: signal.generation) }
        waiter.cancel()
        await waiter.value
        signal.signal()
    }

    @Test func aPassedDeadlineEndsAWait() async {
        let signal = ChangeSignal()
        await signal.wait(after: signal.generation, until: .now)
    }
}
