/// An APNs provider token: an ES256 JWT `{"alg":"ES256","kid":K}.{"iss":T,"iat":S}.signature`.
///
/// Signing is injected (`sign` returns the raw 64-byte r||s) so this type stays free of OpenSSL.
public struct ProviderToken: Sendable, Hashable {
    public var keyID: String
    public var teamID: String
    /// Unix seconds.
    public var issuedAt: Int64
    /// The compact JWT.
    public var jwt: String

    /// Creates and signs a token.
    public init(keyID: String, teamID: String, issuedAt: Int64, sign: ([UInt8]) throws -> [UInt8]) throws {
        let header = Base64URL.encode(Array("{\"alg\":\"ES256\",\"kid\":\"\(keyID)\"}".utf8))
        let claims = Base64URL.encode(Array("{\"iss\":\"\(teamID)\",\"iat\":\(issuedAt)}".utf8))
        let signingInput = header + "." + claims
        let signature = try sign(Array(signingInput.utf8))
        self.keyID = keyID
        self.teamID = teamID
        self.issuedAt = issuedAt
        self.jwt = signingInput + "." + Base64URL.encode(signature)
    }

    private init(keyID: String, teamID: String, issuedAt: Int64, jwt: String) {
        self.keyID = keyID
        self.teamID = teamID
        self.issuedAt = issuedAt
        self.jwt = jwt
    }

    /// A parsed but not yet verified token: what the mock needs to check it.
    public struct Parsed: Sendable, Hashable {
        public var algorithm: String
        public var keyID: String
        public var teamID: String
        public var issuedAt: Int64
        /// `header.claims`, the bytes the signature covers.
        public var signingInput: [UInt8]
        public var signature: [UInt8]
    }

    /// Parses a compact JWT; nil when it is not a well-formed provider token.
    public static func parse(_ jwt: some StringProtocol) -> Parsed? {
        let parts = jwt.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3,
            let header = Base64URL.decode(parts[0]),
            let claims = Base64URL.decode(parts[1]),
            let signature = Base64URL.decode(parts[2])
        else { return nil }
        let headerFields = JSONScanner.stringAndIntegerFields(header)
        let claimFields = JSONScanner.stringAndIntegerFields(claims)
        guard let algorithm = headerFields.strings["alg"],
            let keyID = headerFields.strings["kid"],
            let teamID = claimFields.strings["iss"],
            let issuedAt = claimFields.integers["iat"]
        else { return nil }
        return Parsed(
            algorithm: algorithm,
            keyID: keyID,
            teamID: teamID,
            issuedAt: issuedAt,
            signingInput: Array((parts[0] + "." + parts[1]).utf8),
            signature: signature
        )
    }
}
