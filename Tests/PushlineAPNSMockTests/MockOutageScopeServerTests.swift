import Foundation
import NIOCore
import PushlineAPNSCore
import PushlineAPNSMock
import PushlineHTTP2
import PushlineTLS
import PushlineTestSupport
import Testing

/// An outage limited to one app or one key, through real TLS + HTTP/2 connections: the covered
/// requests are refused, the others answered normally during the same window.
@Suite struct MockOutageScopeServerTests {
    static let token = String(repeating: "cd", count: 32)

    /// A provider token of `keyID`; a connection keeps one (a new one within 20 minutes is 429).
    func jwt(keyID: String = MockFixture.keyID, key: PrivateKey) throws -> String {
        try ProviderToken(keyID: keyID, teamID: MockFixture.teamID, issuedAt: Int64(Date().timeIntervalSince1970)) {
            try ES256.sign($0, with: key)
        }.jwt
    }

    func request(topic: String, pushType: String = "alert", jwt: String) -> HTTP2Request {
        let headers = [
            HTTP2Header("authorization", "bearer \(jwt)", neverIndex: true),
            HTTP2Header("apns-topic", topic, neverIndex: true),
            HTTP2Header("apns-push-type", pushType),
        ]
        return HTTP2Request(authority: "127.0.0.1", path: "/3/device/\(Self.token)", headers: headers, body: ByteBuffer(string: "{}"))
    }

    func answer(_ connection: HTTP2ClientConnection, _ request: HTTP2Request) async throws -> (status: Int, reason: String?) {
        let response = try await connection.send(request).get()
        return (response.status, APNSErrorBody.parse(response.body.map { Array($0.readableBytesView) } ?? []).reason)
    }

    @Test func anOutageOfOneTopicRefusesThatAppOnlyDuringTheSameWindow() async throws {
        let fixture = try await MockFixture.start { configuration in
            configuration.outageStatus = 403
            configuration.outageReason = "InvalidProviderToken"
            configuration.outageSeconds = 600
            configuration.outageTopic = "com.example.b"
        }
        let connection = try await fixture.connect()
        let jwt = try jwt(key: fixture.signingKey)
        let appA = request(topic: "com.example.a", jwt: jwt)
        let appB = request(topic: "com.example.b", jwt: jwt)

        // Another app's request is answered normally and does not open the window.
        #expect(try await answer(connection, appA).status == 200)
        #expect(fixture.stats.outageStartedAt == nil)

        let first = try await answer(connection, appB)
        #expect(first.status == 403)
        #expect(first.reason == "InvalidProviderToken")
        let started = try #require(fixture.stats.outageStartedAt)
        #expect(fixture.stats.outageEndsAt == started + 600)

        for _ in 0..<3 {
            let b = try await answer(connection, appB)
            #expect(b.status == 403)
            #expect(b.reason == "InvalidProviderToken")
            let a = try await answer(connection, appA)
            #expect(a.status == 200)
            #expect(a.reason == nil)
        }
        let voip = try await answer(connection, request(topic: "com.example.b.voip", pushType: "voip", jwt: jwt))
        #expect(voip.status == 403, "the app's sub-topics are covered")
        #expect(try await answer(connection, request(topic: "com.example.bc", jwt: jwt)).status == 200)

        let stats = fixture.stats
        #expect(stats.outageAnswers == 5)
        #expect(stats.byReason["InvalidProviderToken"] == 5)
        #expect(stats.byStatus[200] == 5)
        let endsAt = try #require(stats.outageEndsAt)
        #expect(Date().timeIntervalSince1970 < endsAt, "all inside the one window")
        try await connection.close().get()
        try await fixture.stop()
    }

    @Test func anOutageOfOneKeyCountsItsOwnRequestsOnly() async throws {
        let keyB = try PrivateKey.generateP256()
        let fixture = try await MockFixture.start { configuration in
            configuration.authKeys["KEYB000002"] = .init(
                keyID: "KEYB000002",
                teamID: MockFixture.teamID,
                publicKeyPEM: try keyB.publicKeyPEM()
            )
            configuration.outageStatus = 503
            configuration.outageReason = "ServiceUnavailable"
            configuration.outageSeconds = 600
            configuration.outageStartAfterRequests = 2
            configuration.outageKeyID = "KEYB000002"
        }
        // One connection per key, as a client keeps one token per connection.
        let connectionA = try await fixture.connect()
        let connectionB = try await fixture.connect()
        let byA = request(topic: MockFixture.bundleID, jwt: try jwt(key: fixture.signingKey))
        let byB = request(topic: MockFixture.bundleID, jwt: try jwt(keyID: "KEYB000002", key: keyB))

        for _ in 0..<3 { #expect(try await answer(connectionA, byA).status == 200) }
        #expect(try await answer(connectionB, byB).status == 200, "the first request of key B: the outage starts at its second")
        #expect(fixture.stats.outageStartedAt == nil, "key A's requests are not counted")
        let second = try await answer(connectionB, byB)
        #expect(second.status == 503)
        #expect(second.reason == "ServiceUnavailable")
        #expect(try await answer(connectionA, byA).status == 200)
        #expect(try await answer(connectionB, byB).status == 503)
        #expect(fixture.stats.outageAnswers == 2)
        try await connectionA.close().get()
        try await connectionB.close().get()
        try await fixture.stop()
    }

    @Test func aServerWithABadScopeDoesNotStart() async throws {
        await #expect(throws: MockError.self) {
            _ = try await MockFixture.start { configuration in
                configuration.outageSeconds = 10
                configuration.outageTopic = ""
            }
        }
        await #expect(throws: MockError.self) {
            _ = try await MockFixture.start { $0.outageTopic = "com.example.b" }
        }
    }
}
