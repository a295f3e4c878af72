import Testing

@testable import PushlineWorker

@Suite struct GroupWatchdogTests {
    let start = ContinuousClock.now

    func observation(
        at second: Int,
        joinState: String = "steady",
        owned: Int = 4,
        lag: Int = 0,
        committed: Int = 0,
        held: Bool = false,
        unreachable: Bool = false
    ) -> GroupWatchdog.Observation {
        .init(
            now: start + .seconds(second),
            joinState: joinState,
            owned: owned,
            lag: lag,
            committed: committed,
            held: held,
            kafkaUnreachable: unreachable
        )
    }

    @Test func aMemberWhoseJoinNeverCompletesIsStuckAfterTheBound() {
        var watchdog = GroupWatchdog(bound: .seconds(18))
        #expect(watchdog.observe(observation(at: 0, joinState: "wait-join", owned: 0)) == nil)
        #expect(watchdog.observe(observation(at: 10, joinState: "wait-join", owned: 0)) == nil)
        let change = watchdog.observe(observation(at: 20, joinState: "wait-sync", owned: 0))
        #expect(change == .becameStuck(.noPartitions(joinState: "wait-sync", since: start)))
        #expect(watchdog.observe(observation(at: 25, joinState: "wait-join", owned: 0)) == nil, "said once")
        #expect(watchdog.observe(observation(at: 30, owned: 4, lag: 100, committed: 10)) == .recovered)
        #expect(watchdog.stuck == nil)
    }

    @Test func aMemberWithoutPartitionsInASteadyGroupIsNotStuck() {
        // More members than partitions: this one owns none, and that is fine.
        var watchdog = GroupWatchdog(bound: .seconds(18))
        for second in stride(from: 0, through: 100, by: 5) {
            #expect(watchdog.observe(observation(at: second, owned: 0)) == nil)
        }
    }

    @Test func lagWithCommittedOffsetsThatDoNotMoveIsStuck() {
        var watchdog = GroupWatchdog(bound: .seconds(18))
        #expect(watchdog.observe(observation(at: 0, lag: 500, committed: 100)) == nil)
        #expect(watchdog.observe(observation(at: 5, lag: 400, committed: 200)) == nil, "moving")
        #expect(watchdog.observe(observation(at: 15, lag: 400, committed: 200)) == nil)
        #expect(watchdog.observe(observation(at: 22, lag: 400, committed: 200)) == nil, "17 s without a move")
        let change = watchdog.observe(observation(at: 23, lag: 400, committed: 200))
        #expect(change == .becameStuck(.notCommitting(lag: 400, since: start + .seconds(5))))
        #expect(watchdog.observe(observation(at: 28, lag: 300, committed: 300)) == .recovered)
    }

    @Test func noLagOrAHeldAppIsNotStuck() {
        var watchdog = GroupWatchdog(bound: .seconds(18))
        for second in stride(from: 0, through: 60, by: 5) {
            #expect(watchdog.observe(observation(at: second, lag: 0, committed: 100)) == nil)
        }
        for second in stride(from: 65, through: 120, by: 5) {
            #expect(watchdog.observe(observation(at: second, lag: 900, committed: 100, held: true)) == nil)
        }
        // The hold ends and nothing moves: the bound counts from there.
        #expect(watchdog.observe(observation(at: 125, lag: 900, committed: 100)) == nil)
        #expect(watchdog.observe(observation(at: 140, lag: 900, committed: 100)) == nil)
        #expect(watchdog.observe(observation(at: 145, lag: 900, committed: 100)) != nil)
    }

    @Test func aKafkaOutageIsNotAStuckGroupAndTheBoundCountsFromItsEnd() {
        var watchdog = GroupWatchdog(bound: .seconds(18))
        for second in stride(from: 0, through: 60, by: 5) {
            #expect(watchdog.observe(observation(at: second, joinState: "wait-join", owned: 0, unreachable: true)) == nil)
        }
        #expect(watchdog.observe(observation(at: 65, joinState: "wait-join", owned: 0)) == nil)
        #expect(watchdog.observe(observation(at: 80, joinState: "wait-join", owned: 0)) == nil)
        #expect(watchdog.observe(observation(at: 85, joinState: "wait-join", owned: 0)) != nil, "20 s after Kafka answered again")
    }
}
