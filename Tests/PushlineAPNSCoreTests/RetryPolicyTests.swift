import Testing

@testable import PushlineAPNSCore

@Suite struct RetryPolicyTests {
    let policy = RetryPolicy(maxAttempts: 5, baseDelay: .milliseconds(100), throttledBaseDelay: .seconds(1), maxDelay: .seconds(8))

    @Test func backoffGrowsExponentiallyWithinJitterBounds() {
        for attempt in 1...4 {
            let ceiling = Duration.milliseconds(100) * (1 << (attempt - 1))
            guard case .retry(let low) = policy.decide(after: attempt, kind: .serverError, remaining: nil, random: 0),
                case .retry(let high) = policy.decide(after: attempt, kind: .serverError, remaining: nil, random: 1)
            else {
                Issue.record("expected a retry at attempt \(attempt)")
                return
            }
            #expect(low == ceiling / 2)
            #expect(high == ceiling)
        }
    }

    @Test func throttledWaitsLonger() {
        guard case .retry(let throttled) = policy.decide(after: 1, kind: .throttled, remaining: nil, random: 0.5),
            case .retry(let server) = policy.decide(after: 1, kind: .serverError, remaining: nil, random: 0.5)
        else {
            Issue.record("expected retries")
            return
        }
        #expect(throttled > server * 5)
    }

    @Test func capAttemptsAndDeadline() {
        #expect(policy.decide(after: 5, kind: .serverError, remaining: nil, random: 0.5) == .giveUp)
        #expect(policy.decide(after: 4, kind: .transport, remaining: nil, random: 0.5) != .giveUp)
        #expect(policy.decide(after: 1, kind: .throttled, remaining: .milliseconds(200), random: 0.5) == .giveUp)
        #expect(policy.decide(after: 1, kind: .expired, remaining: nil, random: 0.5) == .giveUp)
        #expect(policy.decide(after: 1, kind: .providerTokenExpired, remaining: nil, random: 0.5) == .retry(after: .zero))
        guard case .retry(let capped) = policy.decide(after: 4, kind: .throttled, remaining: nil, random: 1) else {
            Issue.record("expected a retry")
            return
        }
        #expect(capped == .seconds(8))
    }
}
