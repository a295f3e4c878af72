import Synchronization
import Testing

@testable import PushlineWorker

@Suite(.timeLimit(.minutes(1))) struct BackpressureTests {
    final class Calls: Sendable {
        let pauses = Atomic<Int>(0)
        let resumes = Atomic<Int>(0)
        let (paused, pausedContinuation) = AsyncStream<Void>.makeStream()
    }

    func backpressure(_ gate: InflightGate, patience: Duration, calls: Calls) -> Backpressure {
        Backpressure(
            gate: gate,
            patience: patience,
            pause: {
                calls.pauses.wrappingAdd(1, ordering: .relaxed)
                calls.pausedContinuation.yield()
            },
            resume: { calls.resumes.wrappingAdd(1, ordering: .relaxed) }
        )
    }

    @Test func belowTheLimitAJobStartsAtOnce() async {
        let gate = InflightGate(limit: 4)
        let calls = Calls()
        #expect(await backpressure(gate, patience: .seconds(3600), calls: calls).admit())
        #expect(calls.pauses.load(ordering: .relaxed) == 0)
    }

    @Test func roomWithinPatienceDoesNotPause() async {
        let gate = InflightGate(limit: 4)
        gate.add(4)
        let calls = Calls()
        let rule = backpressure(gate, patience: .seconds(3600), calls: calls)
        let admitted = Task { await rule.admit() }
        gate.release(1)
        #expect(await admitted.value)
        #expect(calls.pauses.load(ordering: .relaxed) == 0)
    }

    @Test func aLongWaitPausesFetchingUntilTheLowWaterMark() async {
        let gate = InflightGate(limit: 4, lowWaterFraction: 0.5)
        gate.add(4)
        let calls = Calls()
        let rule = backpressure(gate, patience: .zero, calls: calls)
        let admitted = Task { await rule.admit() }
        var paused = calls.paused.makeAsyncIterator()
        _ = await paused.next()
        gate.release(2)
        #expect(await admitted.value)
        #expect(calls.pauses.load(ordering: .relaxed) == 1)
        #expect(calls.resumes.load(ordering: .relaxed) == 1)
    }

    @Test func shutdownEndsTheWaitWithoutStartingTheJob() async {
        let gate = InflightGate(limit: 1)
        gate.add(1)
        let calls = Calls()
        let rule = backpressure(gate, patience: .seconds(3600), calls: calls)
        let admitted = Task { await rule.admit() }
        admitted.cancel()
        #expect(await admitted.value == false)
        #expect(calls.pauses.load(ordering: .relaxed) == 0)
    }
}
