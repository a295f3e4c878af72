import PushlineAPNSCore
import Testing

@testable import PushlineAPNS

/// Each request's state, the machine's alone: attempts, latency across retries, and requests
/// leaving the machine once finished.
extension PoolStateMachineTests {
    // MARK: Request state (the machine's alone)

    /// The machine counts an attempt when it emits a send and takes it back when the connection
    /// could not start the request; such requests go again at once (no timer), elsewhere.
    @Test func anAttemptCountsWhenSentAndNotWhenTheConnectionCouldNotStartIt() {
        var driver = Driver(connections: 2, limit: 2)
        driver.submit(2)
        #expect(driver.inFlight[0]?.count == 1 && driver.inFlight[1]?.count == 1)
        let refused = driver.inFlight[0]!
        driver.inFlight[0] = nil
        driver.apply(driver.machine.notStarted(slot: 0, refused.map(\.id), connectionUnusable: true, now: driver.now))
        #expect(driver.inFlight[1]?.count == 2, "sent again at once, on the connection that still takes streams")
        #expect(driver.tick == nil, "no timer for it")
        driver.answerAll(status: 503, reason: .serviceUnavailable)
        driver.advance(.seconds(1))
        driver.answerAll(status: 200)
        #expect(driver.finished == 2)
        #expect(driver.outcomes.values.allSatisfy { $0.count == 1 && $0[0].status == 200 && $0[0].attempts == 2 })
    }

    /// A result's latency runs from the first send a connection reported, across retries.
    @Test func latencyRunsFromTheFirstReportedSendAcrossRetries() {
        var driver = Driver(connections: 1, limit: 1)
        driver.submit(1)
        driver.advance(.milliseconds(40))
        driver.answerAll(status: 503, reason: .serviceUnavailable)
        driver.advance(.seconds(1))
        #expect(driver.inFlightCount == 1, "retried after its backoff")
        driver.advance(.milliseconds(10))
        driver.answerAll(status: 200)
        let outcome = driver.outcomes[0]?.first
        #expect(outcome?.attempts == 2)
        #expect(outcome?.latencyMilliseconds == 1010, "from the first attempt's reported send, not from the retry")
    }

    /// Finished requests leave the machine's table; their slots serve the next requests.
    @Test func finishedRequestsLeaveTheMachine() {
        var driver = Driver(connections: 2, limit: 10)
        driver.submit(30)
        #expect(driver.machine.requestCount == 30)
        driver.answerAll(status: 200)
        #expect(driver.machine.requestCount == 10)
        driver.answerAll(status: 410, reason: .unregistered)
        driver.answerAll(status: 200)
        #expect(driver.machine.requestCount == 0)
        driver.submit(5)
        #expect(driver.machine.requestCount == 5)
        let ids = Set(driver.inFlight.values.flatMap { $0 }.map(\.id))
        #expect(ids.allSatisfy { $0.index < 30 }, "slots are reused")
        driver.answerAll(status: 200)
        #expect(driver.finished == 35)
    }
}
