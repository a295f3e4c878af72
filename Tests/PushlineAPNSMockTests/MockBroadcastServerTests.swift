import NIOCore
import PushlineAPNSCore
import PushlineHTTP2
import PushlineTLS
import PushlineTestSupport
import Testing

/// The mock's channel-management API and broadcast endpoint over HTTP/2 and TLS, on the listener
/// that serves pushes, driven with the transport's plain client. What Apple answers is written out
/// here by hand.
@Suite struct MockBroadcastServerTests {
    static let app = MockFixture.bundleID

    let requestID = "0a1b2c3d-0000-4000-8000-123456789abc"

    func jwt(_ fixture: MockFixture) throws -> String {
        try ProviderToken(keyID: MockFixture.keyID, teamID: MockFixture.teamID, issuedAt: APNSClockNow()) {
            try ES256.sign($0, with: fixture.signingKey)
        }.jwt
    }

    func request(_ method: String, _ path: String, jwt: String?, _ headers: [(String, String)] = [], body: String? = nil) -> HTTP2Request {
        var fields = headers.map { HTTP2Header($0.0, $0.1, neverIndex: true) }
        if let jwt { fields.append(HTTP2Header("authorization", "bearer \(jwt)", neverIndex: true)) }
        return HTTP2Request(method: method, authority: "127.0.0.1", path: path, headers: fields, body: body.map { ByteBuffer(string: $0) })
    }

    func create(_ connection: HTTP2ClientConnection, jwt: String, policy: Int, app: String = app) async throws -> HTTP2Response {
        try await connection.send(
            request(
                "POST",
                "/1/apps/\(app)/channels",
                jwt: jwt,
                body: #"{"message-storage-policy":\#(policy),"push-type":"LiveActivity"}"#
            )
        ).get()
    }

    func broadcast(
        _ connection: HTTP2ClientConnection,
        jwt: String,
        channel: String,
        expiration: String = "0",
        app: String = app,
        requestID: String? = nil
    ) async throws -> HTTP2Response {
        var headers = [
            ("apns-channel-id", channel), ("apns-push-type", "liveactivity"), ("apns-expiration", expiration), ("apns-priority", "10"),
        ]
        if let requestID { headers.append(("apns-request-id", requestID)) }
        return try await connection.send(
            request("POST", "/4/broadcasts/apps/\(app)", jwt: jwt, headers, body: #"{"aps":{"event":"update","content-state":{}}}"#)
        ).get()
    }

    func reason(_ response: HTTP2Response) -> String? {
        response.body.flatMap { APNSErrorBody.parse(Array($0.readableBytesView)).reason }
    }

    @Test func aChannelIsCreatedReadListedBroadcastToAndDeleted() async throws {
        let fixture = try await MockFixture.start { $0.topics = [Self.app] }
        let connection = try await fixture.connect()
        let token = try jwt(fixture)

        let created = try await create(connection, jwt: token, policy: 1)
        #expect(created.status == 201)
        let channel = try #require(created.headers.first(named: "apns-channel-id"))
        #expect(created.headers.first(named: "apns-request-id") != nil, "APNs makes a request id up when none was sent")

        let read = try await connection.send(request("GET", "/1/apps/\(Self.app)/channels", jwt: token, [("apns-channel-id", channel)]))
            .get()
        #expect(read.status == 200)
        #expect(read.body.map { String(buffer: $0) } == #"{"message-storage-policy":1,"push-type":"LiveActivity"}"#)

        let listed = try await connection.send(request("GET", "/1/apps/\(Self.app)/all-channels", jwt: token)).get()
        #expect(listed.status == 200)
        #expect(listed.body.map { String(buffer: $0) } == #"{"channels":["\#(channel)"]}"#)

        let sent = try await broadcast(connection, jwt: token, channel: channel, expiration: "1790000000", requestID: requestID)
        #expect(sent.status == 200)
        #expect(sent.headers.first(named: "apns-request-id") == requestID)
        #expect(sent.headers.first(named: "apns-unique-id")?.count == 36)
        #expect(sent.headers.first(named: "apns-id") == nil)

        let deleted = try await connection.send(
            request("DELETE", "/1/apps/\(Self.app)/channels", jwt: token, [("apns-channel-id", channel)])
        ).get()
        #expect(deleted.status == 204)
        let gone = try await broadcast(connection, jwt: token, channel: channel)
        #expect(gone.status == 400)
        #expect(reason(gone) == "ChannelNotRegistered")
        #expect(gone.headers.first(named: "apns-unique-id") == nil)

        let stats = fixture.stats
        #expect(stats.broadcasts == 2 && stats.broadcastsDelivered == 1)
        #expect(stats.channelRequests == 4 && stats.channelsCreated == 1 && stats.channelsDeleted == 1 && stats.channels == 0)
        #expect(stats.json().contains(#""broadcasts":2,"broadcasts_delivered":1,"channel_requests":4,"channels_created":1"#))
        try await connection.close().get()
        try await fixture.stop()
    }

    @Test func theChannelLimitStoragePolicyAndCredentialsAreEnforced() async throws {
        let fixture = try await MockFixture.start {
            $0.topics = [Self.app]
            $0.maxChannels = 1
        }
        let connection = try await fixture.connect()
        let token = try jwt(fixture)
        let created = try await create(connection, jwt: token, policy: 0)
        let channel = try #require(created.headers.first(named: "apns-channel-id"))
        let second = try await create(connection, jwt: token, policy: 1)
        #expect(second.status == 400)
        #expect(reason(second) == "CannotCreateChannelConfig")

        let stored = try await broadcast(connection, jwt: token, channel: channel, expiration: "1790000000")
        #expect(stored.status == 400)
        #expect(reason(stored) == "BadRequestParams", "a no-storage channel takes apns-expiration 0 only")
        #expect(try await broadcast(connection, jwt: token, channel: channel).status == 200)

        let otherApp = try await broadcast(connection, jwt: token, channel: channel, app: "com.example.other")
        #expect(otherApp.status == 403)
        #expect(reason(otherApp) == "TopicMismatch")
        let unsigned = try await connection.send(request("GET", "/1/apps/\(Self.app)/all-channels", jwt: nil)).get()
        #expect(unsigned.status == 403)
        #expect(reason(unsigned) == "MissingProviderToken")
        let badPath = try await connection.send(request("GET", "/1/apps/\(Self.app)/channel", jwt: token)).get()
        #expect(badPath.status == 404)
        #expect(reason(badPath) == "BadPath")
        try await connection.close().get()
        try await fixture.stop()
    }
}
