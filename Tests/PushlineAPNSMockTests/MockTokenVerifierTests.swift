import PushlineAPNSCore
import PushlineTLS
import Testing

@testable import PushlineAPNSMock

/// Provider-token checks on their own, with a chosen `now`.
@Suite struct MockTokenVerifierTests {
    static let keyID = "ABC123DEFG"
    static let teamID = "DEF123GHIJ"
    static let now: Int64 = 1_790_000_000

    let key: PrivateKey
    let verifier: MockTokenVerifier

    init() throws {
        key = try PrivateKey.generateP256()
        verifier = try MockTokenVerifier([
            Self.keyID: .init(keyID: Self.keyID, teamID: Self.teamID, publicKeyPEM: try key.publicKeyPEM())
        ])
    }

    func verify(issuedAt: Int64) throws -> Result<MockTokenVerifier.Verified, APNSRequestRules.Rejection> {
        let jwt = try ProviderToken(keyID: Self.keyID, teamID: Self.teamID, issuedAt: issuedAt) {
            try ES256.sign($0, with: key)
        }.jwt
        return verifier.verify(authorization: "bearer \(jwt)", now: Self.now)
    }

    func rejection(_ result: Result<MockTokenVerifier.Verified, APNSRequestRules.Rejection>) -> APNSRequestRules.Rejection? {
        if case .failure(let rejection) = result { return rejection }
        return nil
    }

    @Test func anIatMoreThanAMinuteAheadIsAnInvalidToken() throws {
        let ahead = rejection(try verify(issuedAt: Self.now + 61))
        #expect(ahead?.status == 403)
        #expect(ahead?.reason == .invalidProviderToken)
        #expect(rejection(try verify(issuedAt: Self.now + 3600))?.reason == .invalidProviderToken)
    }

    @Test func aMinuteOfClockSkewIsAccepted() throws {
        #expect(rejection(try verify(issuedAt: Self.now + 60)) == nil)
        #expect(rejection(try verify(issuedAt: Self.now + 1)) == nil)
        #expect(rejection(try verify(issuedAt: Self.now)) == nil)
    }

    @Test func anIatOverAnHourOldIsExpired() throws {
        #expect(rejection(try verify(issuedAt: Self.now - 3600)) == nil)
        #expect(rejection(try verify(issuedAt: Self.now - 3601))?.reason == .expiredProviderToken)
    }
}
