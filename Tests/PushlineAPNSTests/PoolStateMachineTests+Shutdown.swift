import PushlineAPNSCore
import Testing

@testable import PushlineAPNS

/// The owner ending work: shutdown finishes every request the machine holds (and nothing goes
/// again after it), and a withdrawal gives up its groups' requests that have not gone out.
extension PoolStateMachineTests {
    // MARK: Shutdown

    @Test func shutdownFinishesEveryRequestItHoldsIncludingBackoffAndHeld() {
        var driver = Driver(connections: 2, limit: 5)
        driver.submit(30)
        // Some wait out a backoff, some are queued, ten are in flight.
        driver.answerAll { _ in .lost }
        #expect(driver.inFlightCount == 10 || driver.machine.waiting > 0)
        let inFlight = driver.inFlightCount
        driver.apply(driver.machine.shutDown(now: driver.now))
        #expect(driver.finished == 30 - inFlight)
        #expect(driver.outcomes.values.allSatisfy { $0.count == 1 && $0[0].noResponse == .shutdown })
        // What was in flight ends as its streams fail; nothing is sent again.
        driver.answerAll { _ in .lost }
        #expect(driver.finished == 30)
        #expect(driver.inFlightCount == 0)
        #expect(driver.outcomes.values.allSatisfy { $0.count == 1 })
        driver.submit(1)
        #expect(driver.outcomes[30]?.first?.noResponse == .shutdown)
    }

    /// During the polite close after shutdown, streams still end: answered ones finish with their
    /// answers, and those that would go again (not processed, an expired token) end `shutdown`
    /// instead of waiting in a queue nobody drains.
    @Test func streamsEndingAfterShutdownFinishAndNothingGoesAgain() {
        var driver = Driver(connections: 1, limit: 5, tokenAuth: true)
        driver.apply(driver.machine.peerLimitChanged(slot: 0, to: 5, now: driver.now))
        driver.submit(1)
        driver.answerAll(status: 200)
        driver.submit(4)
        #expect(driver.inFlightCount == 4)
        driver.apply(driver.machine.shutDown(now: driver.now))
        #expect(driver.connectionActions.contains { $0.0 == 0 && $0.1 == .close })
        let inFlight = driver.inFlight[0]!
        driver.inFlight = [:]
        let ends: [StreamEnd] = [
            .response(Self.ok), .unprocessed, .response(APNSResponse(status: 403, reason: .expiredProviderToken)), .lost,
        ]
        driver.apply(driver.machine.streamsEnded(slot: 0, zip(inFlight, ends).map { driver.ended($0, $1) }, now: driver.now))
        #expect(driver.inFlightCount == 0, "nothing is sent after shutdown")
        #expect(driver.machine.waiting == 0)
        #expect(driver.finished == 5)
        #expect(driver.outcomes.values.allSatisfy { $0.count == 1 })
        #expect(driver.outcomes[1]?.first?.status == 200)
        for index in 2...4 { #expect(driver.outcomes[index]?.first?.noResponse == .shutdown, "\(index)") }
    }

    @Test func shutdownDuringAHoldFinishesTheHeldRequests() {
        var driver = Driver(connections: 1, limit: 50)
        driver.submit(20)
        driver.answerAll(status: 503, reason: .serviceUnavailable)
        #expect(driver.machine.health.isHeld)
        driver.apply(driver.machine.shutDown(now: driver.now))
        #expect(driver.finished == 20)
        #expect(driver.outcomes.values.allSatisfy { $0[0].noResponse == .shutdown })
    }

    // MARK: Withdrawal (a revoke gives the work up)

    /// While the app is held, a revoke's withdrawal ends the held requests of its groups at once,
    /// keeps the others', and ends the probe of a withdrawn group when it comes back refused.
    @Test func withdrawingWhileHeldEndsTheGroupsHeldRequestsAndTheirProbe() {
        var driver = Driver(connections: 1, limit: 50)
        driver.submit(10, options: APNSSendOptions(group: 1))
        driver.submit(10, options: APNSSendOptions(group: 2))
        driver.answerAll(status: 503, reason: .serviceUnavailable)
        #expect(driver.machine.health.isHeld)
        driver.advance(.milliseconds(1100))
        #expect(driver.inFlightCount == 1, "the probe")
        let probeGroup = driver.inFlight.values.flatMap { $0 }.first?.options.group

        driver.apply(driver.machine.withdraw(groups: [1], onlyWhileHeld: true, now: driver.now))
        let withdrawnNow = driver.outcomes.values.filter { $0[0].noResponse == .withdrawn }.count
        #expect(withdrawnNow == (probeGroup == 1 ? 9 : 10), "every held request of group 1 but a probe on the wire")
        #expect(driver.machine.waiting == (probeGroup == 1 ? 10 : 9), "group 2 stays held")

        // The probe comes back refused: if it was group 1's, it ends withdrawn instead of waiting.
        driver.answerAll(status: 503, reason: .serviceUnavailable)
        #expect(driver.outcomes.values.filter { $0[0].noResponse == .withdrawn }.count == 10)
        // APNs heals: only group 2 goes out, and a late request of group 1 never does.
        driver.submit(1, options: APNSSendOptions(group: 1))
        #expect(driver.outcomes[20]?.first?.noResponse == .withdrawn, "submitted after the withdrawal")
        driver.advance(.seconds(5))
        driver.answerAll(status: 200)
        driver.answerAll(status: 200)
        #expect(driver.finished == 21)
        #expect(driver.outcomes.values.allSatisfy { $0.count == 1 })
        let sent = driver.outcomes.filter { $0.value[0].status == 200 }.map(\.key).sorted()
        #expect(sent == Array(10..<20), "group 2 only: \(sent)")
    }

    /// `onlyWhileHeld` does nothing to a healthy app; without it, queued and backoff requests of
    /// the group end, those on the wire finish with their answers, and a retry of one never goes.
    @Test func withdrawingAHealthyAppsWorkTakesOnlyWhatHasNotGoneOut() {
        var driver = Driver(connections: 1, limit: 5)
        driver.submit(12, options: APNSSendOptions(group: 7))
        #expect(driver.inFlightCount == 5)
        driver.apply(driver.machine.withdraw(groups: [7], onlyWhileHeld: true, now: driver.now))
        #expect(driver.finished == 0, "not held: nothing withdrawn")

        driver.apply(driver.machine.withdraw(groups: [7], onlyWhileHeld: false, now: driver.now))
        #expect(driver.finished == 7, "the queued ones")
        #expect(driver.outcomes.values.allSatisfy { $0[0].noResponse == .withdrawn })
        // Of the five on the wire, four are answered and one is lost (its retry is withdrawn).
        var answered = 0
        driver.answerAll { _ in
            answered += 1
            return answered == 1 ? .lost : .response(Self.ok)
        }
        #expect(driver.finished == 12)
        #expect(driver.outcomes.values.filter { $0[0].status == 200 }.count == 4)
        #expect(driver.outcomes.values.filter { $0[0].noResponse == .withdrawn }.count == 8)
        driver.advance(.seconds(5))
        #expect(driver.inFlightCount == 0)
        #expect(driver.machine.waiting == 0)
    }
}
