import Synchronization
import Testing

@testable import PushlineWorker

@Suite(.timeLimit(.minutes(1))) struct WaitableCountTests {
    @Test func aWaitAtOrAboveTheCountReturnsAtOnce() async {
        let count = WaitableCount(3)
        #expect(await count.wait(atMost: 3))
        #expect(await count.wait(atMost: 10))
    }

    @Test func eachWaiterWakesWhenItsOwnThresholdIsReached() async {
        let count = WaitableCount(10)
        let zeroReached = Atomic<Bool>(false)
        let atFive = Task { await count.wait(atMost: 5) }
        let atZero = Task {
            let reached = await count.wait(atMost: 0)
            zeroReached.store(true, ordering: .sequentiallyConsistent)
            return reached
        }
        count.subtract(5)
        #expect(await atFive.value)
        let early = zeroReached.load(ordering: .sequentiallyConsistent)
        #expect(!early, "5 is not 0")
        count.subtract(5)
        #expect(await atZero.value)
    }

    /// A waiter that parks while other threads subtract must never miss the one subtraction that
    /// reaches its threshold.
    @Test func noLostWakeUpWhileSubtractionsRace() async {
        for round in 0..<500 {
            let count = WaitableCount(50)
            let subtractions = Task.detached {
                for _ in 0..<50 { count.subtract(1) }
            }
            #expect(await count.wait(atMost: 0), "round \(round)")
            await subtractions.value
        }
    }

    @Test func cancellationEndsAParkedWaitAndALaterSubtractionWakesNobodyTwice() async {
        let count = WaitableCount(1)
        let waiter = Task { await count.wait(atMost: 0) }
        waiter.cancel()
        #expect(await waiter.value == false)
        count.subtract(1)
        #expect(count.value == 0)
    }

    @Test func aTaskCancelledBeforeItWaitsDoesNotPark() async {
        let count = WaitableCount(1)
        let waiter = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await count.wait(atMost: 0)
        }
        #expect(await waiter.value == false)
    }
}
