import PushlineAPNS
import Testing

@testable import PushlineWorker

@Suite(.timeLimit(.minutes(1))) struct InflightGateTests {
    @Test func isFullAtTheLimitAndWaitForRoomReturnsAtOnceBelowIt() async {
        let gate = InflightGate(limit: 10, lowWaterFraction: 0.5)
        gate.add(9)
        #expect(!gate.isFull)
        #expect(await gate.waitForRoom())
        gate.add(1)
        #expect(gate.isFull)
        let waiter = Task { await gate.waitForRoom() }
        gate.release(1)
        #expect(await waiter.value)
        #expect(gate.count == 9)
    }

    /// Urgent notifications wait only behind urgent ones; bulk intake yields to them (they count
    /// in the total).
    @Test func urgentWorkNeverWaitsBehindBulkWorkAndBulkYieldsToIt() async {
        let gate = InflightGate(limit: 10)
        gate.add(10)
        #expect(gate.isFull)
        #expect(await gate.waitForUrgentRoom(), "a gate full of bulk work has room for urgent work")
        gate.add(10, lane: .urgent)
        #expect(gate.count == 20 && gate.urgentCount == 10)
        gate.release(10)
        #expect(gate.isFull, "bulk still waits while urgent work fills the window")
        let urgentWaiter = Task { await gate.waitForUrgentRoom() }
        gate.release(1, lane: .urgent)
        #expect(await urgentWaiter.value)
        gate.release(9, lane: .urgent)
        #expect(gate.count == 0 && gate.urgentCount == 0 && !gate.isFull)
    }

    /// The intake waits while other threads release one notification at a time: it must wake
    /// once the count reaches the low-water mark, however the releases interleave with parking.
    @Test func aParkedWaiterAlwaysWakesAtLowWater() async {
        for round in 0..<200 {
            let gate = InflightGate(limit: 100, lowWaterFraction: 0.75)
            gate.add(100)
            let releases = Task.detached {
                for _ in 0..<100 { gate.release(1) }
            }
            #expect(await gate.waitForLowWater(), "round \(round)")
            #expect(gate.count <= 75, "round \(round)")
            await releases.value
            #expect(gate.count == 0)
        }
    }

    @Test func cancellingAWaiterEndsItsWaitWithFalse() async {
        let gate = InflightGate(limit: 1)
        gate.add(1)
        let waiter = Task { await gate.waitForLowWater() }
        waiter.cancel()
        #expect(await waiter.value == false)
        // The gate still works for the next waiter.
        let next = Task { await gate.waitForRoom() }
        gate.release(1)
        #expect(await next.value)
    }
}
