import PushlineAPNSMock
import Testing

/// The outage window as a value: driven with chosen instants, no server, no sleeping.
@Suite struct MockOutageTests {
    let t0 = ContinuousClock.now

    func outage(seconds: Int = 20, startAt: Int = 1) -> MockOutage {
        MockOutage(status: 403, reason: "InvalidProviderToken", duration: .seconds(seconds), startAtRequest: startAt)
    }

    @Test func nothingIsRefusedBeforeTheFirstRequest() {
        let value = outage()
        #expect(value.phase(at: t0 + .seconds(3600)) == .waiting, "the window waits for traffic, not for time")
        #expect(value.startedAt == nil)
        #expect(value.endsAt == nil)
    }

    @Test func theFirstRequestOpensTheWindowAndEveryRequestInItIsRefused() {
        var value = outage()
        let first = value.answer(now: t0)
        #expect(first?.status == 403)
        #expect(first?.reason == "InvalidProviderToken")
        #expect(value.startedAt == t0)
        #expect(value.endsAt == t0 + .seconds(20))
        #expect(value.answer(now: t0 + .seconds(10))?.status == 403)
        #expect(value.answer(now: t0 + .milliseconds(19_999))?.status == 403)
        #expect(value.phase(at: t0 + .seconds(19)) == .active)
        #expect(value.answers == 3)
    }

    @Test func afterTheWindowEverythingIsAnsweredNormallyForGood() {
        var value = outage()
        _ = value.answer(now: t0)
        #expect(value.answer(now: t0 + .seconds(20)) == nil, "the window is [start, start + duration)")
        #expect(value.phase(at: t0 + .seconds(20)) == .over)
        #expect(value.answer(now: t0 + .seconds(3600)) == nil)
        #expect(value.answers == 1)
    }

    @Test func theWindowOpensAtTheKthRequest() {
        var value = outage(seconds: 5, startAt: 3)
        #expect(value.answer(now: t0) == nil)
        #expect(value.answer(now: t0 + .seconds(100)) == nil)
        #expect(value.phase(at: t0 + .seconds(100)) == .waiting)
        let third = value.answer(now: t0 + .seconds(200))
        #expect(third?.status == 403)
        #expect(value.startedAt == t0 + .seconds(200), "timed from the Kth request, not from start-up")
        #expect(value.answer(now: t0 + .seconds(204))?.status == 403)
        #expect(value.answer(now: t0 + .seconds(205)) == nil)
        #expect(value.requestsSeen == 3)
        #expect(value.answers == 2)
    }

    @Test func zeroSecondsIsNoOutage() {
        var configuration = MockConfiguration()
        #expect(MockOutage(configuration) == nil, "off by default")
        configuration.outageSeconds = 1.5
        configuration.outageStatus = 503
        configuration.outageReason = "ServiceUnavailable"
        configuration.outageStartAfterRequests = 0
        let value = MockOutage(configuration)
        #expect(value?.duration == .milliseconds(1500))
        #expect(value?.startAtRequest == 1, "a start below 1 is the first request")
        var zero = outage(seconds: 0)
        #expect(zero.answer(now: t0) == nil)
    }

    @Test func theFlagIsStatusReasonSeconds() throws {
        let spec = try OutageSpec(parsing: "403:InvalidProviderToken:20")
        #expect(spec == OutageSpec(status: 403, reason: "InvalidProviderToken", seconds: 20))
        #expect(try OutageSpec(parsing: "503:ServiceUnavailable:0.5").seconds == 0.5)
        var configuration = MockConfiguration()
        try OutageSpec(parsing: "500:InternalServerError:7").apply(to: &configuration)
        #expect(configuration.outageStatus == 500)
        #expect(configuration.outageReason == "InternalServerError")
        #expect(configuration.outageSeconds == 7)
        for bad in [
            "", "403", "403:InvalidProviderToken", "403:InvalidProviderToken:20:1", "200:OK:20", "abc:Reason:1",
            "403::20", "403:Bad\"Quote:20", "403:Reason:-1", "403:Reason:soon", "403:Reason:inf",
        ] {
            #expect(throws: MockError.self, "\(bad)") { try OutageSpec(parsing: bad) }
        }
    }
}
