import PushlineAPNS
import PushlineAPNSCore
import Testing

@testable import PushlineWorker

/// What the deferred intake waits for instead of polling (`DeferredWake`, `DeferredQueue.nextDue`
/// and `hasReady`, `AppWindow.nextShareGrowth`), without I/O: a held job whose time has not come
/// gives a deadline at that time, one whose time has come but not its room gives a wait for room,
/// and an app that goes idle gives the moment the shares grow.
@Suite struct DeferredWakeTests {
    @Test func theNextDueTimeIsTheEarliestLaneHeadWaitingForItsTime() {
        var queue = DeferredQueue()
        #expect(queue.nextDue(app: "a", after: 0) == nil && !queue.hasReady(app: "a", now: 0))
        queue.append(DeferredQueueTests.entry("a", offset: 1, notBefore: 500))
        queue.append(DeferredQueueTests.entry("a", offset: 2, notBefore: 100))
        queue.append(DeferredQueueTests.entry("a", offset: 3, lane: .urgent, notBefore: 300))
        // Heads: urgent 300, bulk 500 (the bulk entry behind its head does not count: FIFO).
        #expect(queue.nextDue(app: "a", after: 0) == 300)
        #expect(!queue.hasReady(app: "a", now: 299))
        #expect(queue.hasReady(app: "a", now: 300))
        #expect(queue.nextDue(app: "a", after: 300) == 500, "a head whose time has come is not a deadline")
        #expect(DeferredQueueTests.offsets(queue.take(app: "a", room: 10, now: 300)) == [3])
        #expect(queue.nextDue(app: "a", after: 300) == 500 && !queue.hasReady(app: "a", now: 300))
        #expect(DeferredQueueTests.offsets(queue.take(app: "a", room: 10, now: 500)) == [1, 2])
        #expect(queue.nextDue(app: "a", after: 500) == nil && !queue.hasReady(app: "a", now: 500))
        // Due but no room: ready, no deadline.
        queue.append(DeferredQueueTests.entry("b", offset: 4))
        #expect(queue.take(app: "b", room: 0, now: 0).isEmpty)
        #expect(queue.hasReady(app: "b", now: 0) && queue.nextDue(app: "b", after: 0) == nil)
    }

    @Test func theWakeKeepsTheEarliestDeadlineAndEachRoom() {
        var wake = DeferredWake()
        #expect(wake.deadline == nil && wake.rooms.isEmpty)
        wake.wake(at: MonotonicInstant(nanoseconds: 900))
        wake.wake(at: MonotonicInstant(nanoseconds: 400))
        wake.wake(at: MonotonicInstant(nanoseconds: 700))
        #expect(wake.deadline == MonotonicInstant(nanoseconds: 400))
        let load = AppLoad(name: "a", rate: 0)
        wake.wake(when: load, isAtMost: -3)
        #expect(wake.rooms.count == 1 && wake.rooms[0].atMost == 0 && wake.rooms[0].load === load)
        // A held app waits for nothing in flight (its probe); another for a quantum of its share.
        let held = AppAdmission(isHeld: true, isPaced: false, isParking: false, inflight: 5, share: 1600)
        #expect(DeferredWake.roomThreshold(held) == 0)
        let busy = AppAdmission(isHeld: false, isPaced: false, isParking: false, inflight: 1600, share: 1600)
        #expect(DeferredWake.roomThreshold(busy) == 1600 - 100)
    }

    @Test func sharesGrowWhenAnIdleAppStopsCounting() {
        let gate = InflightGate(limit: 1000)
        let window = AppWindow(apps: ["a": 0, "b": 0], gate: gate)
        let (a, b) = (window.load(of: "a")!, window.load(of: "b")!)
        let now = MonotonicInstant(nanoseconds: 10_000_000_000)
        #expect(window.nextShareGrowth(after: now) == nil, "no app was seen")
        a.seen(at: now)
        b.seen(at: now.advanced(by: .milliseconds(500)))
        #expect(window.share(of: a, at: now.advanced(by: .milliseconds(600))) == 500)
        #expect(window.nextShareGrowth(after: now) == now.advanced(by: .seconds(2)))
        gate.add(10, app: a)
        #expect(window.nextShareGrowth(after: now) == now.advanced(by: .milliseconds(2500)), "an app with work in flight stays")
        let later = now.advanced(by: .milliseconds(2500))
        #expect(window.share(of: a, at: later) == 1000, "b stopped counting at its time")
        #expect(window.nextShareGrowth(after: later) == nil)
    }

    @Test func aHoldChangeAndARaisedLimitAreSignalled() {
        let gate = InflightGate(limit: 1000)
        let window = AppWindow(apps: ["a": 0, "b": 0], gate: gate)
        let holds = window.holdChanged.generation
        window.setHeld(true, app: "a")
        #expect(window.load(of: "a")!.isHeld && window.holdChanged.generation != holds)
        gate.setLimit(500)
        let raised = gate.limitRaised.generation
        gate.setLimit(400)
        #expect(gate.limitRaised.generation == raised, "a lower limit makes no room")
        gate.setLimit(800)
        #expect(gate.limitRaised.generation != raised)
    }
}
