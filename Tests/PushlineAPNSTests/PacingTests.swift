import PushlineAPNSCore
import Testing

@testable import PushlineAPNS

@Suite struct PacingTests {
    @Test func anUnpacedPoolAlwaysHasATokenAndWantsNoTick() {
        let now = MonotonicInstant.now
        var pacing = Pacing(rate: nil, now: now)
        for _ in 0..<1000 {
            let took = pacing.take(now: now)
            #expect(took)
        }
        let value1 = pacing.tickWanted(now: now)
        #expect(value1 == nil)
        guard case .unpaced = pacing.state else {
            Issue.record("\(pacing.state)")
            return
        }
    }

    /// Out of tokens, the pool is paced out and wants a tick when the next is due; the next
    /// hand-out decides afresh.
    @Test func runningOutOfTokensPacesOutUntilTheNextHandOut() {
        let start = MonotonicInstant.now
        var pacing = Pacing(rate: 200, now: start)  // burst: 10, then one per 5 ms
        let value2 = pacing.tickWanted(now: start)
        #expect(value2 == nil, "not paced out yet")
        var taken = 0
        while pacing.take(now: start) { taken += 1 }
        #expect(taken == 10)
        guard case .pacedOut = pacing.state else {
            Issue.record("paced out: \(pacing.state)")
            return
        }
        let value3 = pacing.tickWanted(now: start)
        #expect(value3 == start + .milliseconds(5))
        let value4 = pacing.take(now: start + .milliseconds(4))
        #expect(!value4)
        pacing.handOutStarts()
        guard case .open = pacing.state else {
            Issue.record("open again: \(pacing.state)")
            return
        }
        let value5 = pacing.tickWanted(now: start + .milliseconds(4))
        #expect(value5 == nil)
        let value6 = pacing.take(now: start + .milliseconds(5))
        #expect(value6)
    }
}
