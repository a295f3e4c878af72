import PushlineAPNSCore

/// Pacing as a value: `rate` sends per second, at most `burst` at once after a quiet spell. The
/// pool takes a token per request it hands to a connection; with none left, requests stay queued
/// and the pool asks for a tick when the next token is due.
struct TokenBucket: Sendable, Equatable {
    let rate: Double
    let burst: Double
    private var tokens: Double
    private var refilledAt: MonotonicInstant

    /// A bucket that starts full. `burst` defaults to 50 ms of `rate` (at least one request), so
    /// the pace stays smooth rather than a burst per second.
    init(rate: Int, burst: Int? = nil, now: MonotonicInstant) {
        self.rate = Double(max(1, rate))
        self.burst = Double(max(1, burst ?? rate / 20))
        self.tokens = self.burst
        self.refilledAt = now
    }

    /// Takes one token if there is one now.
    mutating func take(now: MonotonicInstant) -> Bool {
        refill(now: now)
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }

    /// When the next token is due (now when one is there).
    mutating func nextTokenAt(now: MonotonicInstant) -> MonotonicInstant {
        refill(now: now)
        guard tokens < 1 else { return now }
        let seconds = (1 - tokens) / rate
        return now + Duration.nanoseconds(Int64((seconds * 1e9).rounded(.up)))
    }

    private mutating func refill(now: MonotonicInstant) {
        guard now > refilledAt else { return }
        let seconds = Double(now.nanoseconds(since: refilledAt)) / 1e9
        tokens = min(burst, tokens + seconds * rate)
        refilledAt = now
    }
}
