import PushlineAPNSCore
import PushlineTLS

/// Checks provider tokens (JWTs) as APNs does: ES256 signature by a known key id, the key's
/// team, and an `iat` no older than an hour and at most a minute ahead (a clock that runs ahead
/// signs tokens APNs refuses).
struct MockTokenVerifier: Sendable {
    struct Key: Sendable {
        var teamID: String
        var publicKey: PublicKey
    }

    let keys: [String: Key]
    /// How far in the future (seconds) an `iat` may lie before the token is refused.
    static let maximumFutureSkew: Int64 = 60

    init(_ authKeys: [String: MockConfiguration.AuthKey]) throws {
        var keys: [String: Key] = [:]
        for (keyID, key) in authKeys {
            keys[keyID] = Key(teamID: key.teamID, publicKey: try PublicKey(pemBytes: Array(key.publicKeyPEM.utf8)))
        }
        self.keys = keys
    }

    /// A verified token: what the connection remembers to enforce the refresh rule.
    struct Verified: Sendable, Hashable {
        var jwt: String
        var keyID: String
        var teamID: String
        var issuedAt: Int64
        /// The signature was DER (`ECDSA-Sig-Value`) rather than raw r||s: APNs accepts it.
        var derSignature = false
    }

    /// Verifies the `authorization` header value; the failure is APNs' answer.
    func verify(authorization: String?, now: Int64) -> Result<Verified, APNSRequestRules.Rejection> {
        guard let authorization, !authorization.isEmpty else {
            return .failure(.init(403, .missingProviderToken))
        }
        let prefix = "bearer "
        guard authorization.count > prefix.count, authorization.prefix(prefix.count).lowercased() == prefix else {
            return .failure(.init(403, .invalidProviderToken))
        }
        let jwt = String(authorization.dropFirst(prefix.count))
        guard let parsed = ProviderToken.parse(jwt), parsed.algorithm == "ES256" else {
            return .failure(.init(403, .invalidProviderToken))
        }
        guard let key = keys[parsed.keyID], key.teamID == parsed.teamID else {
            return .failure(.init(403, .invalidProviderToken))
        }
        // JOSE says raw r||s (64 bytes); APNs also takes a DER signature, which some clients send.
        let derSignature = parsed.signature.count != 64
        let raw = derSignature ? (try? ES256.rawSignature(fromDER: parsed.signature)) : parsed.signature
        guard let raw, (try? ES256.verify(raw, of: parsed.signingInput, with: key.publicKey)) == true else {
            return .failure(.init(403, .invalidProviderToken))
        }
        if parsed.issuedAt - now > Self.maximumFutureSkew {
            return .failure(.init(403, .invalidProviderToken))
        }
        if now - parsed.issuedAt > 3600 {
            return .failure(.init(403, .expiredProviderToken))
        }
        return .success(
            Verified(jwt: jwt, keyID: parsed.keyID, teamID: parsed.teamID, issuedAt: parsed.issuedAt, derSignature: derSignature)
        )
    }
}
