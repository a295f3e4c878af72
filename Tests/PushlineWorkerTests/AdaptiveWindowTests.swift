import Testing

@testable import PushlineWorker

/// The time-bounded window without I/O: a simulated clock, a finished-notifications counter and
/// the streams in use, fed every 100 ms as the window controller does.
@Suite struct AdaptiveWindowTests {
    struct Simulation {
        var window = AdaptiveWindow(target: .seconds(1), maximum: 20_000, minimum: 500)
        var now = ContinuousClock.now
        var finished = 0

        /// `seconds` at `rate` notifications per second with `streams` in use; the last window.
        mutating func run(rate: Int, streams: Int, seconds: Double) -> Int {
            var last = 0
            for _ in 0..<Int(seconds * 10) {
                now = now + .milliseconds(100)
                finished += rate / 10
                last = window.sample(finished: finished, streamsInUse: streams, now: now)
            }
            return last
        }
    }

    @Test func theWindowIsTheStreamsInUsePlusTheTargetAtTheMeasuredRate() {
        var simulation = Simulation()
        #expect(simulation.window.window == 500, "the minimum before anything is measured")
        let window = simulation.run(rate: 560, streams: 28, seconds: 3)
        // 28 streams + 560/s x (1 s + 50 ms allowance) = 616.
        #expect(window == 616)
    }

    @Test func theRateStepsUpAndTheWindowFollowsWithinATick() {
        var simulation = Simulation()
        _ = simulation.run(rate: 1000, streams: 50, seconds: 2)
        let window = simulation.run(rate: 10_000, streams: 500, seconds: 0.2)
        #expect(window == 500 + 10_500)
    }

    @Test func aLastingSlowdownShrinksTheWindowAfterTheRateMemory() {
        var simulation = Simulation()
        let fast = simulation.run(rate: 10_000, streams: 500, seconds: 2)
        #expect(fast == 11_000)
        let during = simulation.run(rate: 1000, streams: 100, seconds: 0.5)
        #expect(during == 100 + 10_500, "half a second of a slower rate: the max filter still remembers")
        let after = simulation.run(rate: 1000, streams: 100, seconds: 1)
        #expect(after == 100 + 1050)
    }

    /// APNs stalls: nothing finishes. The window falls to the streams in use (or the minimum),
    /// so the backlog stays in Kafka, and comes back as soon as answers flow again.
    @Test func anAPNsStallShrinksTheWindowToWhatIsOnTheWire() {
        var simulation = Simulation()
        _ = simulation.run(rate: 5000, streams: 400, seconds: 2)
        let stalled = simulation.run(rate: 0, streams: 400, seconds: 2)
        #expect(stalled == 500, "max(minimum, 400 streams)")
        let recovered = simulation.run(rate: 5000, streams: 400, seconds: 0.3)
        #expect(recovered == 400 + 5250)
    }

    @Test func neverAboveMaxInflight() {
        var simulation = Simulation()
        let window = simulation.run(rate: 100_000, streams: 4000, seconds: 1)
        #expect(window == 20_000)
    }

    /// Urgent work in flight counts against the bulk window: bulk intake waits until the urgent
    /// work drains below it, while urgent intake never waits for bulk work.
    @Test func urgentWorkDrainsBeforeBulkIntakeResumes() async {
        var simulation = Simulation()
        let gate = InflightGate(limit: 20_000)
        gate.setLimit(simulation.run(rate: 560, streams: 28, seconds: 2))
        #expect(gate.limit == 616)
        gate.add(600)
        gate.add(100, lane: .urgent)
        #expect(gate.isFull)
        #expect(await gate.waitForUrgentRoom())
        gate.release(100, lane: .urgent)
        #expect(!gate.isFull, "the bulk window opens once the urgent work is done")
    }
}
