import PushlineAPNSCore
import PushlineTLS
import Synchronization

/// The one provider token of a token credential, shared by all its connections.
///
/// Made lazily at first use, refreshed at about 50 minutes, never more often than every 20 —
/// `ProviderTokenPolicy` decides; this class signs and keeps the result under a lock (taken once
/// per batch of requests for a pointer copy; signing happens at most every 20 minutes). Each
/// token carries its `authorization` value, made once per token, and a generation number that
/// requests report back instead of the token itself.
final class ProviderTokenSource: Sendable {
    /// The current token: what a request sends, and how an answer names it.
    struct Bearer: Sendable {
        var jwt: String
        /// `bearer <JWT>`, the `authorization` header's value.
        var authorization: String
        /// 1 for the first token, then one more per refresh, wrapping past 0 ("no token").
        var generation: UInt16
    }

    private struct State {
        var policy = ProviderTokenPolicy()
        var current: Bearer?
    }

    private let keyID: String
    private let teamID: String
    private let key: PrivateKey
    private let now: @Sendable () -> Int64
    private let state = Mutex(State())
    private let onRefresh: @Sendable () -> Void

    init(keyID: String, teamID: String, key: PrivateKey, now: @escaping @Sendable () -> Int64, onRefresh: @escaping @Sendable () -> Void) {
        self.keyID = keyID
        self.teamID = teamID
        self.key = key
        self.now = now
        self.onRefresh = onRefresh
    }

    /// The token to send now (minting one if none exists or the current one is due for refresh).
    func token() throws -> Bearer {
        let now = self.now()
        return try state.withLock { state in
            switch state.policy.tokenForRequest(now: now) {
            case .use(let jwt):
                if let current = state.current, current.jwt == jwt { return current }
                // The policy's token without a bearer of ours cannot happen; make one all the same.
                return install(jwt, in: &state)
            case .mint:
                return try mint(&state, now: now)
            }
        }
    }

    /// APNs answered ExpiredProviderToken to a request that carried the token of `generation`.
    /// Returns the token to resend with: a new one when the 20-minute rule allows, the current
    /// one when it is already newer than the expired one, or nil when the rule refuses.
    @discardableResult
    func expired(generation: UInt16) throws -> Bearer? {
        let now = self.now()
        return try state.withLock { state in
            guard let current = state.current else { return try mint(&state, now: now) }
            guard current.generation == generation else { return current }
            switch state.policy.expiredReported(for: current.jwt, now: now) {
            case .resend: return current
            case .mint: return try mint(&state, now: now)
            case .refuse: return nil
            }
        }
    }

    private func mint(_ state: inout State, now: Int64) throws -> Bearer {
        let token = try ProviderToken(keyID: keyID, teamID: teamID, issuedAt: now) { input in
            try ES256.sign(input, with: key)
        }
        state.policy.minted(jwt: token.jwt, issuedAt: now)
        onRefresh()
        return install(token.jwt, in: &state)
    }

    private static func next(after generation: UInt16) -> UInt16 {
        generation == .max ? 1 : generation + 1
    }

    private func install(_ jwt: String, in state: inout State) -> Bearer {
        let bearer = Bearer(jwt: jwt, authorization: "bearer " + jwt, generation: Self.next(after: state.current?.generation ?? 0))
        state.current = bearer
        return bearer
    }
}
