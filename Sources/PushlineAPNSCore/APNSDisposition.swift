/// What to do about an answer: the classification every caller of the APNs client switches on.
public enum APNSDisposition: Sendable, Hashable {
    /// 200: accepted by APNs.
    case delivered
    /// 410 Unregistered / ExpiredToken: the token is dead since `since` (ms); delete it.
    case invalidToken(reason: APNSReason, since: Int64?)
    /// A failure that repeating cannot fix (400, most 403, 404, 405, 413, unknown statuses).
    case permanent
    /// A failure worth repeating later.
    case retryable(RetryKind)

    /// Why a retry may help; decides how long to wait.
    public enum RetryKind: Sendable, Hashable {
        /// 500 / 503: APNs had trouble; back off, prefer another connection.
        case serverError
        /// 429 TooManyRequests or TooManyProviderTokenUpdates: wait longer.
        case throttled
        /// 403 ExpiredProviderToken: refresh the provider token (at most every 20 minutes), then resend.
        case providerTokenExpired
        /// No response: timeout or connection failure.
        case transport
        /// Not retryable in fact: the job's deadline passed. Kept here so `final` logic is uniform.
        case expired
    }

    public init(_ response: APNSResponse) {
        switch response.status {
        case 200:
            self = .delivered
        case 410:
            self = .invalidToken(reason: response.reason ?? .unregistered, since: response.timestamp)
        case 403 where response.reason == .expiredProviderToken:
            self = .retryable(.providerTokenExpired)
        case 429:
            self = .retryable(.throttled)
        case 500, 502, 503, 504:
            self = .retryable(.serverError)
        default:
            self = .permanent
        }
    }

    /// Whether a later attempt may succeed.
    public var isRetryable: Bool {
        if case .retryable(let kind) = self { return kind != .expired }
        return false
    }
}
