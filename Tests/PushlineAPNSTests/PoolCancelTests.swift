import Foundation
import PushlineAPNSCore
import Testing

@testable import PushlineAPNS

/// An owner's cancel (`PoolStateMachine.cancel(where:)`): the picked requests that have not gone
/// out end at once as `cancelled` wherever they wait (queued in either lane, held, paced, waiting
/// out a retry), those on the wire end with their answers, and one of them that would go again
/// ends `cancelled` instead; the other work is untouched.
@Suite struct PoolCancelTests {
    typealias Driver = PoolStateMachineTests.Driver

    /// Hears nothing (the driver records outcomes); its campaign, one per `Work`, is what a
    /// cancel picks, and each index is a job of its own.
    final class Work: APNSBatchObserver {
        let campaign = UUID().uuidString
        func notificationEnded(_ index: Int, outcome: APNSOutcome) {}
        func cancelKey(_ index: Int) -> APNSCancelKey? { APNSCancelKey(campaign: campaign, job: "job-\(index)") }
    }

    /// Hears nothing and names no job: no cancel picks its requests.
    final class Unnamed: APNSBatchObserver {
        func notificationEnded(_ index: Int, outcome: APNSOutcome) {}
        func cancelKey(_ index: Int) -> APNSCancelKey? { nil }
    }

    /// Picks the requests of `work`.
    static func of(_ work: Work) -> APNSCancelFilter {
        { key in key.campaign == work.campaign }
    }

    static func cancelled(_ driver: Driver) -> [Int] {
        driver.outcomes.filter { $0.value[0].noResponse == .cancelled }.map(\.key).sorted()
    }

    @Test func queuedRequestsOfBothLanesEndCancelledAndThoseOnTheWireFinishNormally() {
        let (campaign, other) = (Work(), Work())
        var driver = Driver(connections: 1, limit: 5)
        driver.submit(8, completion: .observer(campaign, firstIndex: 0))  // 0..<8: five on the wire
        driver.submit(3, options: APNSSendOptions(lane: .urgent), completion: .observer(campaign, firstIndex: 8))  // 8..<11
        driver.submit(4, completion: .observer(other, firstIndex: 0))  // 11..<15
        #expect(driver.inFlightCount == 5)
        #expect(driver.machine.queuedUrgent == 3)

        driver.apply(driver.machine.cancel(where: Self.of(campaign), now: driver.now))
        #expect(Self.cancelled(driver) == Array(5..<11), "queued bulk and urgent requests of the campaign")
        #expect(driver.outcomes[5]?[0].attempts == 0)
        #expect(driver.outcomes[5]?[0].status == 0)
        #expect(driver.machine.queuedCount == 4, "the other work stays queued")

        driver.answerAll(status: 200)
        #expect((0..<5).allSatisfy { driver.outcomes[$0]?[0].status == 200 }, "on the wire: answered")
        driver.answerAll(status: 200)
        #expect((11..<15).allSatisfy { driver.outcomes[$0]?[0].status == 200 }, "the other work goes out")
        #expect(driver.finished == 15)
        #expect(driver.outcomes.values.allSatisfy { $0.count == 1 })
    }

    @Test func heldRequestsEndCancelledWithTheirHoldAndAProbeThatComesBackRefusedDoesNotWaitAgain() {
        let (campaign, other) = (Work(), Work())
        var driver = Driver(connections: 1, limit: 50)
        driver.submit(10, completion: .observer(campaign, firstIndex: 0))
        driver.submit(10, completion: .observer(other, firstIndex: 0))
        driver.answerAll(status: 503, reason: .serviceUnavailable)
        #expect(driver.machine.health.isHeld)
        driver.advance(.milliseconds(1100))
        #expect(driver.inFlightCount == 1, "the probe")
        let probe = driver.inFlight.values.flatMap { $0 }[0]
        let probeIsCampaigns = probe.batch.completion.isObserved(by: campaign)

        driver.apply(driver.machine.cancel(where: Self.of(campaign), now: driver.now))
        #expect(Self.cancelled(driver).count == (probeIsCampaigns ? 9 : 10), "every held request of the campaign but the probe")
        #expect(driver.outcomes.values.filter { $0[0].noResponse == .cancelled }.allSatisfy { $0[0].heldMilliseconds != nil })
        #expect(driver.machine.waiting == (probeIsCampaigns ? 10 : 9), "the other work stays held")

        driver.answerAll(status: 503, reason: .serviceUnavailable)
        #expect(Self.cancelled(driver).count == 10, "the probe, refused, ends cancelled if it was the campaign's")
        driver.advance(.seconds(5))
        driver.answerAll(status: 200)
        driver.answerAll(status: 200)
        #expect(driver.finished == 20)
        #expect(driver.outcomes.values.allSatisfy { $0.count == 1 })
        #expect(driver.outcomes.filter { $0.value[0].status == 200 }.map(\.key).sorted() == Array(10..<20))
    }

    @Test func pacedRequestsWaitingForATokenEndCancelled() {
        let campaign = Work()
        var driver = Driver(connections: 2, limit: 1000, maxRate: 100)
        driver.submit(500, completion: .observer(campaign, firstIndex: 0))
        #expect(driver.inFlightCount == 5, "the burst")
        driver.apply(driver.machine.cancel(where: Self.of(campaign), now: driver.now))
        #expect(Self.cancelled(driver).count == 495)
        #expect(driver.machine.waiting == 0)
        driver.answerAll(status: 200)
        driver.advance(.seconds(1))
        #expect(driver.inFlightCount == 0, "nothing of it is sent after the cancel")
        #expect(driver.finished == 500)
    }

    @Test func requestsWaitingOutARetryEndCancelledWithTheirAttempts() {
        let (campaign, other) = (Work(), Work())
        var driver = Driver(connections: 1, limit: 10)
        driver.submit(2, completion: .observer(campaign, firstIndex: 0))
        driver.submit(1, completion: .observer(other, firstIndex: 0))
        driver.answerAll(status: 500, reason: .internalServerError)
        #expect(!driver.machine.health.isHeld)
        #expect(driver.machine.waiting == 3, "all three wait out a backoff")

        driver.apply(driver.machine.cancel(where: Self.of(campaign), now: driver.now))
        #expect(Self.cancelled(driver) == [0, 1])
        #expect(driver.outcomes[0]?[0].attempts == 1)
        driver.advance(.seconds(1))
        #expect(driver.inFlightCount == 1, "only the other work's retry goes")
        driver.answerAll(status: 200)
        #expect(driver.outcomes[2]?[0].status == 200)
    }

    /// A request on the wire at the cancel is answered; if its answer would send it again (a
    /// retry, a free resend), it ends cancelled instead, with that attempt counted.
    @Test func aRequestOnTheWireThatWouldGoAgainAfterTheCancelEndsCancelled() {
        let campaign = Work()
        var driver = Driver(connections: 1, limit: 10)
        driver.submit(3, completion: .observer(campaign, firstIndex: 0))
        #expect(driver.inFlightCount == 3)
        driver.apply(driver.machine.cancel(where: Self.of(campaign), now: driver.now))
        #expect(driver.finished == 0, "nothing waited")

        let wire = driver.inFlight[0]!
        driver.inFlight = [:]
        driver.apply(
            driver.machine.streamsEnded(
                slot: 0,
                [
                    driver.ended(wire[0], .response(APNSResponse(status: 200))),
                    driver.ended(wire[1], .response(APNSResponse(status: 500, reason: .internalServerError))),
                    driver.ended(wire[2], .unprocessed),
                ],
                now: driver.now
            )
        )
        #expect(driver.outcomes[0]?[0].status == 200)
        #expect(Self.cancelled(driver) == [1, 2])
        #expect(driver.outcomes[1]?[0].attempts == 1)
        driver.advance(.seconds(1))
        #expect(driver.inFlightCount == 0)
        #expect(driver.machine.requestCount == 0)
    }

    /// Requests handed to a connection that could not start them (it closed first) never
    /// reached the wire: after a cancel they end cancelled instead of going again.
    @Test func requestsAConnectionCouldNotStartEndCancelledAfterTheCancel() {
        let (campaign, other) = (Work(), Work())
        var driver = Driver(connections: 1, limit: 10)
        driver.submit(2, completion: .observer(campaign, firstIndex: 0))
        driver.submit(1, completion: .observer(other, firstIndex: 0))
        driver.apply(driver.machine.cancel(where: Self.of(campaign), now: driver.now))
        #expect(driver.finished == 0, "all three were handed to the connection")
        let handed = driver.inFlight[0]!
        driver.inFlight = [:]
        driver.apply(driver.machine.notStarted(slot: 0, handed.map(\.id), connectionUnusable: true, now: driver.now))
        #expect(Self.cancelled(driver) == [0, 1])
        #expect(driver.outcomes[0]?[0].attempts == 0, "the attempt that never started does not count")
        #expect(driver.machine.waiting == 1, "the other work waits for a connection")
    }

    @Test func requestsWithACompletionClosureAreNeverPicked() {
        var driver = Driver(connections: 1, limit: 1)
        driver.submit(3)
        driver.apply(driver.machine.cancel(where: { _ in true }, now: driver.now))
        #expect(driver.finished == 0)
        #expect(driver.machine.queuedCount == 2)
    }

    /// An observer that gives a request no key keeps it out of every cancel.
    @Test func requestsWithoutAKeyAreNeverPicked() {
        var driver = Driver(connections: 1, limit: 1)
        driver.submit(3, completion: .observer(Unnamed(), firstIndex: 0))
        driver.apply(driver.machine.cancel(where: { _ in true }, now: driver.now))
        #expect(driver.finished == 0)
        #expect(driver.machine.queuedCount == 2)
    }

    /// The key is the one the observer gives the index it hears (its submission's first index +
    /// the request's), so a group's members can be picked one by one.
    @Test func theFilterSeesTheObserversIndex() {
        let group = Work()
        var driver = Driver(connections: 1, limit: 1)
        driver.submit(4, completion: .observer(group, firstIndex: 10))
        driver.apply(driver.machine.cancel(where: { key in key.job == "job-12" }, now: driver.now))
        #expect(Self.cancelled(driver) == [2])
        #expect(driver.machine.queuedCount == 2)
    }
}

extension RequestBatch.Completion {
    fileprivate func isObserved(by observer: AnyObject) -> Bool {
        if case .observer(let heard, _) = self { heard === observer } else { false }
    }
}
