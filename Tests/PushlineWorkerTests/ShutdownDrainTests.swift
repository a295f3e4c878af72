import Synchronization
import Testing

@testable import PushlineWorker

@Suite(.timeLimit(.minutes(1))) struct ShutdownDrainTests {
    @Test func endsWhenTheLastJobCompletes() async {
        let active = WaitableCount(2)
        let drain = ShutdownDrain(
            activeJobs: active, timeout: .seconds(3600), onlyHeldWorkLeft: { false }, poolsSampled: ChangeSignal())
        let ending = Task { await drain.run() }
        active.subtract(1)
        active.subtract(1)
        #expect(await ending.value == .finished)
    }

    @Test func endsWhenASampleShowsOnlyHeldWorkLeft() async {
        let held = Atomic<Bool>(false)
        let sampled = ChangeSignal()
        let drain = ShutdownDrain(
            activeJobs: WaitableCount(1), timeout: .seconds(3600), onlyHeldWorkLeft: { held.load(ordering: .relaxed) },
            poolsSampled: sampled)
        let ending = Task { await drain.run() }
        held.store(true, ordering: .relaxed)
        sampled.signal()
        #expect(await ending.value == .onlyHeldWorkLeft)
    }

    @Test func endsAtTheTimeoutWithWorkLeft() async {
        let drain = ShutdownDrain(
            activeJobs: WaitableCount(1), timeout: .zero, onlyHeldWorkLeft: { false }, poolsSampled: ChangeSignal())
        #expect(await drain.run() == .timedOut)
    }
}
