/// A timed outage of the mock, as a value: from the `startAtRequest`-th request on, every request
/// is answered `status` with `reason` for `duration`, then the mock heals for good.
///
/// The window opens at the arrival of its first request, not at start-up, so a test or a chaos
/// run can start the mock first and the traffic later. The caller passes the clock instant in
/// (`answer(now:)`), so the value is tested without sleeping.
public struct MockOutage: Sendable, Hashable {
    public enum Phase: Sendable, Hashable {
        /// Fewer than `startAtRequest` requests so far.
        case waiting
        /// Inside the window.
        case active
        /// The window has passed; nothing is refused any more.
        case over
    }

    public let status: Int
    public let reason: String
    public let duration: Duration
    /// The request (counted from 1) whose arrival opens the window.
    public let startAtRequest: Int
    /// Requests counted while waiting (none are counted once the window opened).
    public private(set) var requestsSeen = 0
    /// When the window opened, once it has.
    public private(set) var startedAt: ContinuousClock.Instant?
    /// Requests answered by the outage.
    public private(set) var answers = 0

    /// `startAtRequest` below 1 is taken as 1.
    public init(status: Int, reason: String, duration: Duration, startAtRequest: Int = 1) {
        self.status = status
        self.reason = reason
        self.duration = duration
        self.startAtRequest = max(1, startAtRequest)
    }

    /// The outage a configuration asks for, or nil when it asks for none (`outageSeconds` 0).
    public init?(_ configuration: MockConfiguration) {
        guard configuration.outageSeconds > 0, configuration.outageSeconds.isFinite else { return nil }
        self.init(
            status: configuration.outageStatus,
            reason: configuration.outageReason,
            duration: .milliseconds(Int64((configuration.outageSeconds * 1000).rounded())),
            startAtRequest: configuration.outageStartAfterRequests
        )
    }

    /// When the window closes, once it has opened.
    public var endsAt: ContinuousClock.Instant? { startedAt.map { $0 + duration } }

    public func phase(at now: ContinuousClock.Instant) -> Phase {
        guard let endsAt else { return .waiting }
        return now < endsAt ? .active : .over
    }

    /// Counts a request arriving at `now`; the outage's answer to it, or nil when it is to be
    /// answered normally.
    public mutating func answer(now: ContinuousClock.Instant) -> (status: Int, reason: String)? {
        switch phase(at: now) {
        case .over:
            return nil
        case .waiting:
            requestsSeen += 1
            guard requestsSeen >= startAtRequest, duration > .zero else { return nil }
            startedAt = now
        case .active:
            break
        }
        answers += 1
        return (status, reason)
    }
}
