import PushlineTestSupport
import Synchronization
import Testing

@testable import PushlineWorker

@Suite(.timeLimit(.minutes(1))) struct BackpressureTests {
    final class Calls: Sendable {
        let pauses = Atomic<Int>(0)
        let resumes = Atomic<Int>(0)
        let admitted = Atomic<Bool>(false)
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

    /// A full gate admits the next run once a quantum (1/16 of the limit) has left, not at the
    /// first release: the intake's runs are that long, not one job each.
    @Test func aFullGateWaitsForRoomForAQuantum() async throws {
        let gate = InflightGate(limit: 64)
        #expect(gate.quantum == 4)
        gate.add(64)
        let calls = Calls()
        let rule = backpressure(gate, patience: .seconds(3600), calls: calls)
        let admitted = Task {
            let admitted = await rule.admit()
            calls.admitted.store(true, ordering: .releasing)
            return admitted
        }
        // Parked at the full gate first (a gate that is not full admits at once).
        try await waitUntil("the job waits at the full gate") { gate.waitingForRoom == 1 }
        gate.release(3)
        // A release wakes the waiters it satisfies before it returns: this one is still parked.
        #expect(gate.waitingForRoom == 1, "three of a quantum of four have left")
        let early = calls.admitted.load(ordering: .acquiring)
        #expect(!early)
        gate.release(1)
        #expect(await admitted.value)
        #expect(calls.pauses.load(ordering: .relaxed) == 0)
    }

    @Test func theQuantumIsASixteenthOfTheLimitWithinBounds() {
        #expect(InflightGate(limit: 1).quantum == 1)
        #expect(InflightGate(limit: 20_000).quantum == 1024)
        #expect(InflightGate(limit: 1_600).quantum == 100)
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
