import PushlineAPNSCore
import Testing

@testable import PushlineAPNS

/// The app's systemic hold: a storm of refusals holds it, probes go out with backoff, the hold
/// ends on a probe's success; a lone refusal stays final, and held requests end at their deadline
/// or the hold limit.
extension PoolStateMachineTests {
    // MARK: Hold, probe, resume

    @Test func aStormOf403HoldsTheAppProbesWithBackoffAndResumes() {
        var driver = Driver(connections: 2, limit: 50)
        driver.submit(100)
        driver.answerAll(status: 403, reason: .invalidProviderToken)
        #expect(driver.machine.health.isHeld)
        #expect(driver.transitions.count == 1)
        #expect(driver.finished == 0, "nothing is finalized")
        #expect(driver.inFlightCount == 0)

        // One probe after about a second; it fails; the next waits longer.
        driver.advance(.milliseconds(500))
        #expect(driver.inFlightCount == 0)
        driver.advance(.milliseconds(600))
        #expect(driver.inFlightCount == 1)
        driver.answerAll(status: 403, reason: .invalidProviderToken)
        driver.advance(.milliseconds(900))
        #expect(driver.inFlightCount == 0, "backoff grows after a failed probe")
        driver.advance(.seconds(2))
        #expect(driver.inFlightCount == 1)

        // APNs heals: the probe succeeds, and everything goes at full speed.
        driver.answerAll(status: 200)
        #expect(!driver.machine.health.isHeld)
        #expect(driver.transitions.count == 2)
        #expect(driver.inFlightCount == 99)
        driver.answerAll(status: 200)
        #expect(driver.finished == 100)
        #expect(driver.outcomes.values.allSatisfy { $0.count == 1 && $0[0].status == 200 })
        // Held attempts did not count (only the four answered before the hold began did); the
        // record says how long each waited.
        #expect(driver.outcomes.values.filter { $0[0].attempts == 1 }.count == 96)
        #expect(driver.outcomes.values.allSatisfy { $0[0].attempts <= 2 })
        #expect(driver.outcomes.values.allSatisfy { ($0[0].heldMilliseconds ?? 0) >= 3000 })
    }

    @Test func a503StormDoesNotSpendRetriesWhileHeld() {
        var driver = Driver(connections: 1, limit: 100, retry: RetryPolicy(maxAttempts: 2, baseDelay: .milliseconds(10)))
        driver.submit(40)
        for _ in 0..<20 {
            driver.answerAll(status: 503, reason: .serviceUnavailable)
            driver.advance(.seconds(1))
        }
        #expect(driver.finished == 0, "retries are not spent in an outage: \(driver.outcomes)")
        #expect(driver.machine.health.isHeld)
        driver.advance(.seconds(30))
        driver.answerAll(status: 200)
        driver.answerAll(status: 200)
        #expect(driver.finished == 40)
        #expect(driver.outcomes.values.allSatisfy { $0[0].status == 200 })
    }

    @Test func transportFailuresCanHoldTheAppToo() {
        var driver = Driver(connections: 1, limit: 20)
        driver.submit(20)
        driver.answerAll { _ in .timedOut }
        #expect(driver.machine.health.hold?.reason == "timeout")
        #expect(driver.finished == 0)
    }

    @Test func aWrongTopicInOneJobIsFinalWhileTheAppWorks() {
        var driver = Driver(connections: 1, limit: 200)
        driver.submit(100)
        var index = 0
        driver.answerAll { _ in
            defer { index += 1 }
            return index % 25 == 0 ? .response(APNSResponse(status: 400, reason: .topicDisallowed)) : .response(Self.ok)
        }
        #expect(!driver.machine.health.isHeld)
        #expect(driver.finished == 100)
        let refused = driver.outcomes.values.filter { $0[0].status == 400 }
        #expect(refused.count == 4)
        #expect(refused.allSatisfy { $0[0].reasonString == "TopicDisallowed" && $0[0].heldMilliseconds == nil })
    }

    @Test func aSystemicRefusalWithoutEvidenceOfHealthIsRetriedNotFinalized() {
        var driver = Driver(connections: 1, limit: 10)
        driver.submit(2)
        driver.answerAll(status: 400, reason: .topicDisallowed)
        #expect(driver.finished == 0, "two refusals and no success: not proof that the job is at fault")
        #expect(!driver.machine.health.isHeld)
        driver.advance(.milliseconds(200))
        #expect(driver.inFlightCount == 2)
    }

    @Test func aHeldRequestEndsAtItsDeadlineAsExpired() {
        var driver = Driver(connections: 1, limit: 50)
        driver.submit(10, options: APNSSendOptions(deadline: driver.now + .seconds(5)))
        driver.submit(10)
        driver.answerAll(status: 503, reason: .serviceUnavailable)
        #expect(driver.machine.health.isHeld)
        driver.advance(.seconds(6))
        let expired = driver.outcomes.values.filter { $0[0].reasonString == "expired" }
        #expect(expired.count == 10)
        #expect(expired.allSatisfy { $0[0].status == 0 })
    }

    @Test func aHoldThatOutlastsTheLimitEndsWithTheLastSystemicAnswerAndHeldTime() {
        var driver = Driver(
            connections: 1,
            limit: 50,
            health: AppHealth.Thresholds(minimumSystemic: 5, ratio: 0.5, holdLimit: .seconds(60))
        )
        driver.submit(10)
        driver.answerAll(status: 403, reason: .invalidProviderToken)
        for _ in 0..<30 {
            driver.advance(.seconds(3))
            driver.answerAll(status: 403, reason: .invalidProviderToken)
        }
        #expect(driver.finished == 10)
        #expect(
            driver.outcomes.values.allSatisfy {
                $0.count == 1 && $0[0].status == 403 && $0[0].reasonString == "InvalidProviderToken"
                    && ($0[0].heldMilliseconds ?? 0) >= 60_000
            }
        )
    }
}
