import NIOCore
import PushlineAPNSCore
import PushlineHTTP2
import PushlineTLS
import PushlineTestSupport
import Testing

/// The mock accepts what APNs accepts, not only what Pushline sends: a TLS client that offers no
/// ALPN, and a JWT whose ES256 signature is DER-encoded. Each deviation is counted in the stats.
@Suite struct MockLeniencyTests {
    func request(_ jwt: String) -> HTTP2Request {
        HTTP2Request(
            method: "POST",
            authority: "127.0.0.1",
            path: "/3/device/" + String(repeating: "ab", count: 32),
            headers: [
                HTTP2Header("authorization", "bearer \(jwt)", neverIndex: true), HTTP2Header("apns-topic", MockFixture.bundleID),
                HTTP2Header("apns-push-type", "alert"),
            ],
            body: ByteBuffer(string: #"{"aps":{"alert":"hi"}}"#)
        )
    }

    func jwt(_ fixture: MockFixture, der: Bool = false) throws -> String {
        try ProviderToken(keyID: MockFixture.keyID, teamID: MockFixture.teamID, issuedAt: APNSClockNow()) { input in
            let raw = try ES256.sign(input, with: fixture.signingKey)
            return der ? try ES256.derSignature(fromRaw: raw) : raw
        }.jwt
    }

    @Test func aClientWithoutALPNIsServedAndCounted() async throws {
        let fixture = try await MockFixture.start()
        let token = try jwt(fixture)
        let plain = try await fixture.connect(alpn: false)
        #expect(try await plain.send(request(token)).get().status == 200)
        let usual = try await fixture.connect()
        #expect(try await usual.send(request(token)).get().status == 200)
        #expect(fixture.stats.connectionsWithoutALPN == 1, "only the connection without ALPN")
        #expect(fixture.stats.json().contains("\"connections_without_alpn\":1"))
        try await plain.close().get()
        try await usual.close().get()
        try await fixture.stop()
    }

    @Test func aDERSignedTokenIsAcceptedAndCounted() async throws {
        let fixture = try await MockFixture.start()
        let connection = try await fixture.connect()
        #expect(try await connection.send(request(try jwt(fixture, der: true))).get().status == 200)
        #expect(fixture.stats.derSignedTokens == 1)
        #expect(fixture.stats.json().contains("\"der_signed_tokens\":1"))
        try await connection.close().get()

        // A DER signature by another key is still refused.
        let other = try await fixture.connect()
        let forged = try ProviderToken(keyID: MockFixture.keyID, teamID: MockFixture.teamID, issuedAt: APNSClockNow()) {
            try ES256.derSignature(fromRaw: try ES256.sign($0, with: try PrivateKey.generateP256()))
        }.jwt
        let response = try await other.send(request(forged)).get()
        #expect(response.status == 403)
        try await other.close().get()
        try await fixture.stop()
    }
}
