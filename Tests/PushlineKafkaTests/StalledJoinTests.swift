import Testing

@testable import PushlineKafka

@Suite struct StalledJoinTests {
    let start = ContinuousClock.now

    func observation(
        at second: Double,
        pending: Bool = true,
        owned: Int = 0,
        started: Int = 0,
        closing: Bool = false,
        unreachable: Bool = false
    ) -> StalledJoin.Observation {
        .init(
            now: start + .milliseconds(Int(second * 1000)),
            joinPending: pending,
            owned: owned,
            started: started,
            closing: closing,
            kafkaUnreachable: unreachable
        )
    }

    @Test func aJoinPendingPastTheBoundIsAbandonedOnce() {
        var rule = StalledJoin(bound: .seconds(22))
        #expect(rule.observe(observation(at: 0)) == .wait)
        #expect(rule.observe(observation(at: 21.99)) == .wait)
        #expect(rule.observe(observation(at: 22)) == .rejoin(pendingFor: .seconds(22)))
        #expect(rule.rejoins == 1)
        // The clock restarts at the rejoin: not again at every look.
        #expect(rule.observe(observation(at: 22.01)) == .wait)
        #expect(rule.observe(observation(at: 43)) == .wait)
        #expect(rule.observe(observation(at: 44)) == .rejoin(pendingFor: .seconds(22)), "still stalled: once more")
        #expect(rule.rejoins == 2)
    }

    @Test func aJoinThatCompletesInTimeIsLeftAlone() {
        // A normal round (3-11 s on the embedded broker), then the steady group.
        var rule = StalledJoin(bound: .seconds(22))
        #expect(rule.observe(observation(at: 0)) == .wait)
        #expect(rule.observe(observation(at: 11)) == .wait)
        for second in stride(from: 11.0, through: 200, by: 1) {
            #expect(rule.observe(observation(at: second, pending: false, owned: 2)) == .wait)
        }
        #expect(rule.since == nil)
    }

    @Test func aMemberWithNoPartitionInASettledGroupIsLeftAlone() {
        // More members than partitions: the round assigned nothing, and the join is done.
        var rule = StalledJoin(bound: .seconds(22))
        for second in stride(from: 0.0, through: 200, by: 1) {
            #expect(rule.observe(observation(at: second, pending: false, owned: 0)) == .wait)
        }
    }

    @Test func theClockCountsFromTheRevokeNotFromTheSubscription() {
        var rule = StalledJoin(bound: .seconds(22))
        #expect(rule.observe(observation(at: 0)) == .wait)
        #expect(rule.observe(observation(at: 5, pending: false, owned: 4)) == .wait)
        // Revoked at 100 s: librdkafka rejoins, pending again.
        #expect(rule.observe(observation(at: 100)) == .wait)
        #expect(rule.observe(observation(at: 121)) == .wait)
        #expect(rule.observe(observation(at: 122)) == .rejoin(pendingFor: .seconds(22)))
    }

    @Test func ownedPartitionsOrStartedRecordsHoldTheRejoin() {
        // Cooperative: a member that keeps partitions while its next round is pending is working.
        var rule = StalledJoin(bound: .seconds(22))
        for second in stride(from: 0.0, through: 100, by: 1) {
            #expect(rule.observe(observation(at: second, owned: 1)) == .wait)
        }
        // A revoke that still waits for started records: not abandoned under them.
        for second in stride(from: 100.0, through: 200, by: 1) {
            #expect(rule.observe(observation(at: second, started: 3)) == .wait)
        }
        #expect(rule.observe(observation(at: 201)) == .wait, "the clock starts when nothing is started")
        #expect(rule.observe(observation(at: 223)) == .rejoin(pendingFor: .seconds(22)))
    }

    @Test func aClosingMemberNeverRejoins() {
        var rule = StalledJoin(bound: .seconds(22))
        #expect(rule.observe(observation(at: 0)) == .wait)
        for second in stride(from: 1.0, through: 100, by: 1) {
            #expect(rule.observe(observation(at: second, closing: true)) == .wait)
        }
        #expect(rule.since == nil)
    }

    @Test func anOutageRestartsTheClockWhenItEnds() {
        var rule = StalledJoin(bound: .seconds(22))
        #expect(rule.observe(observation(at: 0)) == .wait)
        #expect(rule.observe(observation(at: 10, unreachable: true)) == .wait)
        #expect(rule.observe(observation(at: 40, unreachable: true)) == .wait, "a rejoin would not help")
        #expect(rule.observe(observation(at: 41)) == .wait)
        #expect(rule.observe(observation(at: 62)) == .wait)
        #expect(rule.observe(observation(at: 63)) == .rejoin(pendingFor: .seconds(22)))
    }

    @Test func aZeroBoundNeverRejoins() {
        var rule = StalledJoin(bound: .zero)
        for second in stride(from: 0.0, through: 1000, by: 10) {
            #expect(rule.observe(observation(at: second)) == .wait)
        }
    }

    @Test func theRejoinCountStartsOverOnceTheJoinCompletes() {
        var rule = StalledJoin(bound: .seconds(10))
        _ = rule.observe(observation(at: 0))
        #expect(rule.observe(observation(at: 10)) == .rejoin(pendingFor: .seconds(10)))
        #expect(rule.observe(observation(at: 13, pending: false, owned: 4)) == .wait)
        #expect(rule.rejoins == 0)
        _ = rule.observe(observation(at: 50))
        #expect(rule.observe(observation(at: 60)) == .rejoin(pendingFor: .seconds(10)))
        #expect(rule.rejoins == 1)
    }
}
