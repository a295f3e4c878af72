import PushlineKafka
import Testing

@Suite struct KafkaReachabilityTests {
    let start = ContinuousClock.now

    @Test func oneWarningPerOutageARateLimitedReminderAndOneLineWhenBack() {
        var reachability = KafkaReachability(reminderInterval: .seconds(30))
        #expect(reachability.succeeded(at: start) == nil, "answering all along: nothing to say")
        #expect(reachability.failed(at: start) == .unreachable)
        #expect(reachability.isUnreachable)
        // Hundreds of connection failures in between say nothing more...
        for second in 1..<30 {
            #expect(reachability.failed(at: start + .seconds(second)) == nil)
        }
        // ...until the reminder is due, and then not again for another interval.
        #expect(reachability.failed(at: start + .seconds(30)) == .stillUnreachable(since: .seconds(30)))
        #expect(reachability.failed(at: start + .seconds(45)) == nil)
        #expect(reachability.failed(at: start + .seconds(61)) == .stillUnreachable(since: .seconds(61)))
        #expect(reachability.succeeded(at: start + .seconds(70)) == .reachable(after: .seconds(70)))
        #expect(!reachability.isUnreachable)
        #expect(reachability.succeeded(at: start + .seconds(71)) == nil, "said once")
    }

    @Test func failingRecentlyNeedsFreshFailures() {
        var reachability = KafkaReachability(reminderInterval: .seconds(30))
        #expect(!reachability.failingRecently(at: start, within: .seconds(15)))
        _ = reachability.failed(at: start)
        #expect(reachability.failingRecently(at: start + .seconds(10), within: .seconds(15)))
        #expect(!reachability.failingRecently(at: start + .seconds(20), within: .seconds(15)), "one failure long ago")
        _ = reachability.failed(at: start + .seconds(20))
        #expect(reachability.failingRecently(at: start + .seconds(21), within: .seconds(15)))
        _ = reachability.succeeded(at: start + .seconds(22))
        #expect(!reachability.failingRecently(at: start + .seconds(22), within: .seconds(15)))
    }

    @Test func aNewOutageWarnsAgain() {
        var reachability = KafkaReachability(reminderInterval: .seconds(30))
        #expect(reachability.failed(at: start) == .unreachable)
        #expect(reachability.succeeded(at: start + .seconds(2)) == .reachable(after: .seconds(2)))
        #expect(reachability.failed(at: start + .seconds(3)) == .unreachable)
        #expect(reachability.failed(at: start + .seconds(4)) == nil)
    }
}
