import PushlineAPNSCore
import PushlineTLS
import Synchronization

/// The one provider token of a token credential, shared by all its connections.
///
/// Made lazily at first use, refreshed at about 50 minutes, never more often than every 20 —
/// `ProviderTokenPolicy` decides; this class signs and keeps the result under a lock (taken once
/// per request for a pointer copy; signing happens at most every 20 minutes).
final class ProviderTokenSource: Sendable {
    private let keyID: String
    private let teamID: String
    private let key: PrivateKey
    private let now: @Sendable () -> Int64
    private let policy: Mutex<ProviderTokenPolicy>
    /// `bearer <JWT>` for the current token, made once per token rather than once per request.
    private let header = Mutex<(jwt: String, value: String)?>(nil)
    private let onRefresh: @Sendable () -> Void

    init(keyID: String, teamID: String, key: PrivateKey, now: @escaping @Sendable () -> Int64, onRefresh: @escaping @Sendable () -> Void) {
        self.keyID = keyID
        self.teamID = teamID
        self.key = key
        self.now = now
        self.policy = Mutex(ProviderTokenPolicy())
        self.onRefresh = onRefresh
    }

    /// The `authorization` value for `jwt` (cached for the current token).
    func authorization(for jwt: String) -> String {
        header.withLock { cached in
            if let cached, cached.jwt == jwt { return cached.value }
            let value = "bearer " + jwt
            cached = (jwt, value)
            return value
        }
    }

    /// The token to send now (making one when needed).
    func token() throws -> String {
        let now = self.now()
        return try policy.withLock { policy in
            switch policy.tokenForRequest(now: now) {
            case .use(let jwt):
                return jwt
            case .mint:
                return try mint(&policy, now: now)
            }
        }
    }

    /// APNs answered ExpiredProviderToken to a request sent with `jwt`: the token to resend with,
    /// or nil when refreshing now would break the 20-minute rule.
    func expired(_ jwt: String) throws -> String? {
        let now = self.now()
        return try policy.withLock { policy in
            switch policy.expiredReported(for: jwt, now: now) {
            case .resend(let current): return current
            case .mint: return try mint(&policy, now: now)
            case .refuse: return nil
            }
        }
    }

    private func mint(_ policy: inout ProviderTokenPolicy, now: Int64) throws -> String {
        let token = try ProviderToken(keyID: keyID, teamID: teamID, issuedAt: now) { input in
            try ES256.sign(input, with: key)
        }
        policy.minted(jwt: token.jwt, issuedAt: now)
        onRefresh()
        return token.jwt
    }
}
