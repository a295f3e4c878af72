/// When to try a notification again: exponential backoff with full jitter, capped, bounded by
/// attempts and by the notification's own deadline.
public struct RetryPolicy: Sendable, Hashable {
    /// Attempts that count, including the first (`apns.max_attempts`).
    public var maxAttempts: Int
    /// The first backoff for server errors and transport failures.
    public var baseDelay: Duration
    /// The first backoff for 429 (APNs asks the sender to slow down: wait longer).
    public var throttledBaseDelay: Duration
    /// No single wait is longer than this.
    public var maxDelay: Duration

    public init(
        maxAttempts: Int = 5,
        baseDelay: Duration = .milliseconds(100),
        throttledBaseDelay: Duration = .seconds(1),
        maxDelay: Duration = .seconds(30)
    ) {
        self.maxAttempts = max(1, maxAttempts)
        self.baseDelay = baseDelay
        self.throttledBaseDelay = throttledBaseDelay
        self.maxDelay = maxDelay
    }

    /// The decision after a failed attempt.
    public enum Decision: Sendable, Hashable {
        case retry(after: Duration)
        /// Attempts used up, or the deadline would pass before the retry.
        case giveUp
    }

    /// Decides what follows attempt number `attempt` (1-based) that ended as `kind`.
    ///
    /// - Parameters:
    ///   - remaining: time left until the job's deadline or expiration; nil = no deadline.
    ///   - random: a number in 0..<1 for the jitter (injected so tests are deterministic).
    public func decide(
        after attempt: Int,
        kind: APNSDisposition.RetryKind,
        remaining: Duration?,
        random: Double
    ) -> Decision {
        guard kind != .expired, attempt < maxAttempts else { return .giveUp }
        let delay: Duration
        switch kind {
        case .providerTokenExpired:
            // The token is refreshed before the resend; no need to wait.
            delay = .zero
        case .throttled:
            delay = backoff(base: throttledBaseDelay, attempt: attempt, random: random)
        case .serverError, .transport, .expired:
            delay = backoff(base: baseDelay, attempt: attempt, random: random)
        }
        if let remaining, delay >= remaining {
            return .giveUp
        }
        return .retry(after: delay)
    }

    /// Full jitter: uniform in [ceiling/2, ceiling], where ceiling = base * 2^(attempt-1), capped.
    /// The lower half keeps a floor so a throttled sender really slows down.
    func backoff(base: Duration, attempt: Int, random: Double) -> Duration {
        let exponent = min(max(attempt - 1, 0), 20)
        let ceiling = min(base * (1 << exponent), maxDelay)
        let fraction = 0.5 + 0.5 * min(max(random, 0), 1)
        return ceiling * fraction
    }
}
