import Synchronization
import Testing

@testable import PushlineWorker

@Suite(.timeLimit(.minutes(1))) struct ShutdownDrainTests {
    @Test func endsWhenTheLastJobCompletes() async {
        let active = WaitableCount(2)
        let drain = ShutdownDrain(
            activeJobs: active,
            timeout: .seconds(3600),
            onlyHeldWorkLeft: { false },
            holdChanged: ChangeSignal()
        )
        let ending = Task { await drain.run() }
        active.subtract(1)
        active.subtract(1)
        #expect(await ending.value == .finished)
    }

    @Test func endsWhenAHoldBeginsAndOnlyHeldWorkIsLeft() async {
        let held = Atomic<Bool>(false)
        let holdChanged = ChangeSignal()
        let drain = ShutdownDrain(
            activeJobs: WaitableCount(1),
            timeout: .seconds(3600),
            onlyHeldWorkLeft: { held.load(ordering: .relaxed) },
            holdChanged: holdChanged
        )
        let ending = Task { await drain.run() }
        held.store(true, ordering: .relaxed)
        holdChanged.signal()
        #expect(await ending.value == .onlyHeldWorkLeft)
    }

    /// Another app's last job ends while one app is held: its pool went idle first, so the drain
    /// looks again when the job count drops, with no hold change.
    @Test func endsWhenTheOtherAppsLastJobEndsDuringAHold() async {
        let otherAppIdle = Atomic<Bool>(false)
        let active = WaitableCount(2)
        let drain = ShutdownDrain(
            activeJobs: active,
            timeout: .seconds(3600),
            onlyHeldWorkLeft: { otherAppIdle.load(ordering: .relaxed) },
            holdChanged: ChangeSignal()
        )
        let ending = Task { await drain.run() }
        otherAppIdle.store(true, ordering: .relaxed)
        active.subtract(1)
        #expect(await ending.value == .onlyHeldWorkLeft)
    }

    @Test func endsAtTheTimeoutWithWorkLeft() async {
        let drain = ShutdownDrain(
            activeJobs: WaitableCount(1),
            timeout: .zero,
            onlyHeldWorkLeft: { false },
            holdChanged: ChangeSignal()
        )
        #expect(await drain.run() == .timedOut)
    }
}
