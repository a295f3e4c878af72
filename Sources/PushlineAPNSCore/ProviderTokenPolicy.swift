/// When a credential's provider token is minted, reused or refreshed: a pure state machine.
///
/// Rules from APNs: the first token is made lazily at first use; one token is shared by every
/// connection of the credential; it is refreshed at about 50 minutes (APNs rejects tokens older
/// than an hour) and never more often than every 20 minutes (else 429 TooManyProviderTokenUpdates).
/// Times are unix seconds, injected by the caller so tests can move the clock.
public struct ProviderTokenPolicy: Sendable, Hashable {
    public var refreshAfterSeconds: Int64
    public var minimumIntervalSeconds: Int64
    /// The token in use and when it was issued.
    public private(set) var current: (jwt: String, issuedAt: Int64)?

    public init(refreshAfterSeconds: Int64 = 50 * 60, minimumIntervalSeconds: Int64 = 20 * 60) {
        self.refreshAfterSeconds = refreshAfterSeconds
        self.minimumIntervalSeconds = minimumIntervalSeconds
    }

    public enum Action: Sendable, Hashable {
        /// Send with this token.
        case use(String)
        /// Make a new token (then report it with `minted`).
        case mint
    }

    /// What to send a request with at `now`.
    public func tokenForRequest(now: Int64) -> Action {
        guard let current else { return .mint }
        if now - current.issuedAt >= refreshAfterSeconds {
            return .mint
        }
        return .use(current.jwt)
    }

    /// Records a newly made token.
    public mutating func minted(jwt: String, issuedAt: Int64) {
        current = (jwt, issuedAt)
    }

    public enum ExpiredAction: Sendable, Hashable {
        /// Someone already refreshed: resend with the current token.
        case resend(with: String)
        /// Make a new token, then resend.
        case mint
        /// The token is younger than the minimum interval: refreshing now would earn
        /// TooManyProviderTokenUpdates. The request fails with APNs' answer.
        case refuse
    }

    /// APNs answered 403 ExpiredProviderToken to a request sent with `jwt`.
    public func expiredReported(for jwt: String, now: Int64) -> ExpiredAction {
        guard let current else { return .mint }
        if current.jwt != jwt {
            return .resend(with: current.jwt)
        }
        if now - current.issuedAt >= minimumIntervalSeconds {
            return .mint
        }
        return .refuse
    }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.refreshAfterSeconds == rhs.refreshAfterSeconds
            && lhs.minimumIntervalSeconds == rhs.minimumIntervalSeconds
            && lhs.current?.jwt == rhs.current?.jwt
            && lhs.current?.issuedAt == rhs.current?.issuedAt
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(current?.jwt)
        hasher.combine(current?.issuedAt)
    }
}
