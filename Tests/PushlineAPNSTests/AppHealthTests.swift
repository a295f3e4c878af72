import PushlineAPNSCore
import Testing

@testable import PushlineAPNS

/// The hold decision as a value: answers and a clock in, hold and probe timing out.
@Suite struct AppHealthTests {
    let start = MonotonicInstant.now

    func health(minimum: Int = 10, ratio: Double = 0.5) -> AppHealth {
        AppHealth(thresholds: .init(minimumSystemic: minimum, ratio: ratio), origin: start)
    }

    @Test func aStormHoldsOnlyOnceTheMinimumAndTheRatioAreReached() {
        var health = health()
        health.recordNotificationLevel(5, now: start)
        for index in 0..<9 {
            #expect(health.recordSystemic(status: 503, reason: "ServiceUnavailable", now: start) == nil, "answer \(index)")
        }
        let transition = health.recordSystemic(status: 503, reason: "ServiceUnavailable", now: start)
        #expect(transition == .held(.init(since: start, status: 503, reason: "ServiceUnavailable", failedProbes: 0)))
        #expect(health.isHeld)
    }

    @Test func scatteredFailuresAmongSuccessesNeverHold() {
        var health = health()
        var now = start
        for _ in 0..<1000 {
            health.recordNotificationLevel(20, now: now)
            #expect(health.recordSystemic(status: 500, reason: "InternalServerError", now: now) == nil)
            now = now + .milliseconds(10)
        }
        #expect(!health.isHeld)
        #expect(health.provenHealthy(now: now))
    }

    @Test func oldAnswersLeaveTheWindow() {
        var health = health(minimum: 3)
        health.recordNotificationLevel(100, now: start)
        #expect(health.provenHealthy(now: start + .seconds(1)))
        #expect(!health.provenHealthy(now: start + .seconds(3)), "no evidence older than the window")
        _ = health.recordSystemic(status: 403, reason: "InvalidProviderToken", now: start + .seconds(3))
        _ = health.recordSystemic(status: 403, reason: "InvalidProviderToken", now: start + .seconds(3))
        #expect(health.recordSystemic(status: 403, reason: "InvalidProviderToken", now: start + .seconds(3)) != nil)
    }

    @Test func probesBackOffUpToTheMaximumAndASuccessResumes() {
        var health = health(minimum: 1)
        _ = health.recordSystemic(status: 403, reason: "InvalidProviderToken", now: start)
        #expect(!health.mayProbe(now: start + .milliseconds(999)))
        #expect(health.mayProbe(now: start + .seconds(1)))
        health.probeSent()
        #expect(!health.mayProbe(now: start + .seconds(100)), "one probe at a time")
        var now = start + .seconds(1)
        var waits: [Duration] = []
        for _ in 0..<8 {
            health.probeFailed(now: now, random: 1)
            let next = health.nextProbeAt!
            waits.append(next - now)
            now = next
            health.probeSent()
        }
        #expect(waits == [.seconds(2), .seconds(4), .seconds(8), .seconds(16), .seconds(30), .seconds(30), .seconds(30), .seconds(30)])
        #expect(health.hold?.failedProbes == 8)
        let resumed = health.probeSucceeded(now: now)
        #expect(resumed == .resumed(after: now - start, failedProbes: 8))
        #expect(!health.isHeld)
        #expect(health.provenHealthy(now: now))
    }

    /// The phase goes serving → held with a probe due → probe in flight → (no verdict) due again
    /// at the same time → in flight → resumed.
    @Test func theProbePhaseFollowsEachProbe() {
        let start = MonotonicInstant.now
        var health = AppHealth(thresholds: AppHealth.Thresholds(minimumSystemic: 1), origin: start)
        #expect(health.phase == .serving)
        health.probeSent()
        #expect(health.phase == .serving, "no probe without a hold")
        let held = health.recordSystemic(status: 500, reason: "InternalServerError", now: start)
        guard case .held(let hold)? = held else {
            Issue.record("held: \(String(describing: held))")
            return
        }
        let due = start + .seconds(1)
        #expect(health.phase == .held(hold, .due(due)))
        health.probeSent()
        #expect(health.phase == .held(hold, .inFlight(due: due)))
        #expect(health.probeInFlight && health.nextProbeAt == due)
        health.probeReturned()
        #expect(health.phase == .held(hold, .due(due)))
        #expect(health.mayProbe(now: due))
        health.probeSent()
        let resumed = health.probeSucceeded(now: due)
        #expect(resumed == .resumed(after: .seconds(1), failedProbes: 0))
        #expect(health.phase == .serving && health.nextProbeAt == nil)
    }
}
