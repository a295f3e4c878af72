import Testing

@testable import PushlineAPNSMock

/// The mock's injected faults as a value: every-N events, the 429/500/503 roll, the delay.
@Suite struct MockChaosTests {
    func chaos(connection: Int = 1, _ configure: (inout MockConfiguration) -> Void) -> MockChaos {
        var configuration = MockConfiguration()
        configure(&configuration)
        return MockChaos(configuration: configuration, connection: connection)
    }

    @Test func everyNEventsFallOnTheirStreams() {
        var chaos = chaos {
            $0.closeEvery = 6
            $0.goawayEvery = 3
            $0.limitDropEvery = 2
        }
        let events = (1...6).map { _ in chaos.streamStarted() }
        #expect(events[0] == [])
        #expect(events[1] == [.dropLimit])
        #expect(events[2] == [.goAway])
        #expect(events[3] == [.dropLimit])
        #expect(events[4] == [])
        #expect(events[5] == [.closeAbruptly, .goAway, .dropLimit])
        #expect(chaos.streamsStarted == 6)
    }

    @Test func noChaosIsConfiguredByDefault() {
        var chaos = chaos { _ in }
        for _ in 0..<10_000 {
            #expect(chaos.streamStarted() == [])
            #expect(chaos.failure() == nil)
            #expect(chaos.responseDelay() == .zero)
        }
    }

    /// One uniform draw decides among 429, 500 and 503 in that order, at their rates.
    @Test func theRollAnswersAtTheConfiguredRates() {
        var chaos = chaos {
            $0.rate429 = 0.1
            $0.rate500 = 0.2
            $0.rate503 = 0.3
        }
        var counts: [Int: Int] = [:]
        let draws = 100_000
        for _ in 0..<draws {
            counts[chaos.failure()?.status ?? 200, default: 0] += 1
        }
        // Binomial standard deviations are under 0.002 here; 0.01 is five of them and more.
        for (status, rate) in [(429, 0.1), (500, 0.2), (503, 0.3), (200, 0.4)] {
            let seen = Double(counts[status, default: 0]) / Double(draws)
            #expect(abs(seen - rate) < 0.01, "\(status): \(seen)")
        }
        var always = self.chaos { $0.rate503 = 1 }
        #expect(always.failure() == MockChaos.Failure(status: 503, reason: .serviceUnavailable))
        var tooMany = self.chaos { $0.rate429 = 1 }
        #expect(tooMany.failure() == MockChaos.Failure(status: 429, reason: .tooManyRequests))
    }

    @Test func aRunRepeatsFromItsSeedAndConnectionsDrawApart() {
        func rolls(seed: UInt64, connection: Int) -> [Int] {
            var chaos = chaos(connection: connection) {
                $0.seed = seed
                $0.rate500 = 0.5
            }
            return (0..<64).map { _ in chaos.failure()?.status ?? 200 }
        }
        #expect(rolls(seed: 7, connection: 1) == rolls(seed: 7, connection: 1))
        #expect(rolls(seed: 7, connection: 1) != rolls(seed: 7, connection: 2))
        #expect(rolls(seed: 7, connection: 1) != rolls(seed: 8, connection: 1))
    }

    @Test func theDelayIsTheLatencyPlusJitterAndOnlyJitterDraws() {
        var fixed = chaos {
            $0.latencyMilliseconds = 5
            $0.rate500 = 0.5
        }
        var untouched = chaos { $0.rate500 = 0.5 }
        for _ in 0..<100 {
            #expect(fixed.responseDelay() == .milliseconds(5))
            // Without jitter the delay draws nothing: the roll sequence is the same as without it.
            #expect(fixed.failure() == untouched.failure())
        }
        var jittery = chaos {
            $0.latencyMilliseconds = 5
            $0.jitterMilliseconds = 10
        }
        var delays: Set<Duration> = []
        for _ in 0..<1000 {
            let delay = jittery.responseDelay()
            #expect(delay >= .milliseconds(5) && delay < .milliseconds(15))
            delays.insert(delay)
        }
        #expect(delays.count > 100, "jitter varies")
    }
}
