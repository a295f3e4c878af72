import Foundation
import NIOCore
import PushlineAPNSCore
import PushlineAPNSMock
import PushlineHTTP2
import PushlineTLS
import PushlineTestSupport
import Testing

/// The timed outage through a real TLS + HTTP/2 connection: refused during the window, healed after.
@Suite struct MockOutageServerTests {
    static let token = String(repeating: "ef", count: 32)

    func request(_ fixture: MockFixture) throws -> HTTP2Request {
        let jwt = try ProviderToken(keyID: MockFixture.keyID, teamID: MockFixture.teamID, issuedAt: Int64(Date().timeIntervalSince1970)) {
            try ES256.sign($0, with: fixture.signingKey)
        }.jwt
        let headers = [
            HTTP2Header("authorization", "bearer \(jwt)", neverIndex: true),
            HTTP2Header("apns-topic", MockFixture.bundleID, neverIndex: true),
        ]
        return HTTP2Request(authority: "127.0.0.1", path: "/3/device/\(Self.token)", headers: headers, body: ByteBuffer(string: "{}"))
    }

    func answer(_ connection: HTTP2ClientConnection, _ request: HTTP2Request) async throws -> (status: Int, reason: String?) {
        let response = try await connection.send(request).get()
        return (response.status, APNSErrorBody.parse(response.body.map { Array($0.readableBytesView) } ?? []).reason)
    }

    @Test func a403OutageRefusesValidTokensThenHeals() async throws {
        let directory = try ProjectPaths.temporaryDirectory("outage-stats")
        let statsFile = directory.appendingPathComponent("stats.json").path
        let fixture = try await MockFixture.start { configuration in
            configuration.maxStreams = 50
            configuration.outageStatus = 403
            configuration.outageReason = "InvalidProviderToken"
            configuration.outageSeconds = 1
            configuration.statsFile = statsFile
        }
        let connection = try await fixture.connect()
        let valid = try request(fixture)

        // The first request opens the window: a valid token is refused, and the connection stays
        // at one stream (an outage answer is no token success).
        let first = try await answer(connection, valid)
        #expect(first.status == 403)
        #expect(first.reason == "InvalidProviderToken")
        #expect(try await connection.peerMaxConcurrentStreams().get() == 1)

        var refused = 1
        try await waitUntil("the outage heals", timeout: .seconds(20), interval: .milliseconds(50)) {
            let got = try await answer(connection, valid)
            if got.status == 200 { return true }
            #expect(got.status == 403)
            #expect(got.reason == "InvalidProviderToken")
            refused += 1
            return false
        }
        #expect(try await answer(connection, valid).status == 200, "healed for good")
        try await waitUntil("limit raised to 50 after the first real success") {
            try await connection.peerMaxConcurrentStreams().get() == 50
        }

        let stats = fixture.stats
        #expect(stats.outageAnswers == refused)
        #expect(stats.byReason["InvalidProviderToken"] == refused)
        #expect(stats.byStatus[200] == 2)
        #expect(stats.maxOpenStreamsWhileProbing <= 1)
        let started = try #require(stats.outageStartedAt)
        #expect(stats.outageEndsAt == started + 1)
        try await connection.close().get()
        try await fixture.stop()

        let json = try String(contentsOfFile: statsFile, encoding: .utf8)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        #expect(object["outage_answers"] as? Int == refused)
        #expect(object["outage_started_at"] as? Double != nil)
        #expect(object["outage_ends_at"] as? Double != nil)
    }

    @Test func a503OutageStartsAtTheKthRequestWhateverTheRequest() async throws {
        let fixture = try await MockFixture.start { configuration in
            configuration.outageStatus = 503
            configuration.outageReason = "ServiceUnavailable"
            configuration.outageSeconds = 600
            configuration.outageStartAfterRequests = 3
        }
        let connection = try await fixture.connect()
        let valid = try request(fixture)
        #expect(try await answer(connection, valid).status == 200)
        #expect(try await answer(connection, valid).status == 200)
        let third = try await answer(connection, valid)
        #expect(third.status == 503)
        #expect(third.reason == "ServiceUnavailable")
        // No token, a bad device token: the outage answers before any rule.
        let bare = HTTP2Request(authority: "127.0.0.1", path: "/3/device/xyz", headers: [], body: ByteBuffer(string: "{}"))
        let fourth = try await answer(connection, bare)
        #expect(fourth.status == 503)
        #expect(fourth.reason == "ServiceUnavailable")
        #expect(fixture.stats.outageAnswers == 2)
        try await connection.close().get()
        try await fixture.stop()
    }
}
