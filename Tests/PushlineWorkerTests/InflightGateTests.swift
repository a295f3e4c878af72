import Testing

@testable import PushlineWorker

@Suite(.timeLimit(.minutes(1))) struct InflightGateTests {
    @Test func admitsBelowTheLimitAndParksAtIt() async {
        let gate = InflightGate(limit: 10, lowWaterFraction: 0.5)
        gate.add(9)
        #expect(!gate.isFull)
        gate.add(1)
        #expect(gate.isFull)
        #expect(await gate.waitForRoom(timeout: .milliseconds(20)) == false)
        gate.release(1)
        #expect(await gate.waitForRoom(timeout: .milliseconds(20)))
    }

    /// The consumer parks while other threads release one notification at a time: it must wake
    /// once the count reaches the low-water mark, however the releases interleave with parking.
    @Test func aParkedWaiterAlwaysWakesAtLowWater() async {
        for round in 0..<200 {
            let gate = InflightGate(limit: 100, lowWaterFraction: 0.75)
            gate.add(100)
            let releases = Task.detached {
                for _ in 0..<100 { gate.release(1) }
            }
            await gate.waitForRoom()
            #expect(gate.count <= 99, "round \(round)")
            await releases.value
            #expect(gate.count == 0)
        }
    }

    @Test func closeWakesTheWaiterForGood() async {
        let gate = InflightGate(limit: 1)
        gate.add(1)
        let waiter = Task { await gate.waitForRoom() }
        try? await Task.sleep(for: .milliseconds(10))
        gate.close()
        await waiter.value
        #expect(!gate.isFull)
        #expect(await gate.waitForRoom(timeout: .milliseconds(1)))
    }
}
