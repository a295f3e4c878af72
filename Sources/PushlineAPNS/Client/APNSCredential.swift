import PushlineTLS

/// How one pool proves itself to APNs. One credential per pool: APNs ties a connection to one team
/// and key (mixing them earns 403 UnrelatedKeyIdInToken).
public enum APNSCredential: Sendable {
    /// Token trust: ES256 JWTs signed with the `.p8` key.
    case token(keyID: String, teamID: String, key: PrivateKey)
    /// Certificate trust: a client certificate presented in the TLS handshake.
    case certificate(TLSConfiguration.Identity)

    /// Loads a token credential from a `.p8` file (PKCS#8 PEM, P-256).
    public static func token(keyFile: String, keyID: String, teamID: String) throws -> APNSCredential {
        let key = try PrivateKey(pemFile: keyFile)
        guard key.isP256 else {
            throw APNSClientError.credential("'\(keyFile)' is not a P-256 key; APNs signing keys are ES256 (P-256)")
        }
        return .token(keyID: keyID, teamID: teamID, key: key)
    }

    var isToken: Bool {
        if case .token = self { return true }
        return false
    }
}
