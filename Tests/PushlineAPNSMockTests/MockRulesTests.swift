import Foundation
import NIOCore
import PushlineAPNSCore
import PushlineAPNSMock
import PushlineHTTP2
import PushlineTLS
import PushlineTestCA
import PushlineTestSupport
import Testing

/// Drives the mock with the transport's plain HTTP/2 client over TLS and checks APNs' answer for
/// every row of the reference table.
@Suite struct MockRulesTests {
    static let token = String(repeating: "ab", count: 32)

    func jwt(
        _ fixture: MockFixture,
        issuedAt: Int64? = nil,
        key: PrivateKey? = nil,
        keyID: String = MockFixture.keyID,
        teamID: String = MockFixture.teamID
    ) throws -> String {
        let signer = key ?? fixture.signingKey
        return try ProviderToken(keyID: keyID, teamID: teamID, issuedAt: issuedAt ?? APNSClockNow()) {
            try ES256.sign($0, with: signer)
        }.jwt
    }

    func request(
        method: String = "POST",
        path: String = "/3/device/\(token)",
        headers: [(String, String)],
        body: String? = #"{"aps":{"alert":"hi"}}"#
    ) -> HTTP2Request {
        HTTP2Request(
            method: method,
            authority: "127.0.0.1",
            path: path,
            headers: headers.map { HTTP2Header($0.0, $0.1, neverIndex: true) },
            body: body.map { ByteBuffer(string: $0) }
        )
    }

    func answer(_ connection: HTTP2ClientConnection, _ request: HTTP2Request) async throws -> (Int, String?, Int64?) {
        let response = try await connection.send(request).get()
        let body = response.body.map { Array($0.readableBytesView) } ?? []
        let parsed = APNSErrorBody.parse(body)
        return (response.status, parsed.reason, parsed.timestamp)
    }

    @Test func everyRowOfTheReferenceTable() async throws {
        let fixture = try await MockFixture.start { configuration in
            configuration.topics = [MockFixture.bundleID]
            configuration.unregisteredTokens = ["dead" + String(repeating: "00", count: 30)]
        }
        let connection = try await fixture.connect()
        let good = try jwt(fixture)
        let base: [(String, String)] = [
            ("authorization", "bearer \(good)"), ("apns-topic", MockFixture.bundleID), ("apns-push-type", "alert"),
        ]
        // The first valid request succeeds and opens the connection up.
        #expect(try await answer(connection, request(headers: base)).0 == 200)

        let cases: [(HTTP2Request, Int, String)] = [
            (request(headers: base + [("apns-collapse-id", String(repeating: "c", count: 65))]), 400, "BadCollapseId"),
            (request(path: "/3/device/xyz", headers: base), 400, "BadDeviceToken"),
            (request(headers: base + [("apns-expiration", "tomorrow")]), 400, "BadExpirationDate"),
            (request(headers: base + [("apns-id", "not-a-uuid")]), 400, "BadMessageId"),
            (request(headers: base + [("apns-priority", "7")]), 400, "BadPriority"),
            (request(headers: [("authorization", "bearer \(good)"), ("apns-topic", "")]), 400, "BadTopic"),
            (request(headers: base + [("apns-topic", "again")]), 400, "DuplicateHeaders"),
            (
                request(headers: [("authorization", "bearer \(good)"), ("apns-topic", MockFixture.bundleID), ("apns-push-type", "fax")]),
                400, "InvalidPushType"
            ),
            (request(path: "/3/device/", headers: base), 400, "MissingDeviceToken"),
            (request(headers: [("authorization", "bearer \(good)")]), 400, "MissingTopic"),
            (request(headers: base, body: nil), 400, "PayloadEmpty"),
            (request(headers: [("authorization", "bearer \(good)"), ("apns-topic", "com.other.app")]), 400, "TopicDisallowed"),
            (request(headers: [("apns-topic", MockFixture.bundleID)]), 403, "MissingProviderToken"),
            (
                request(headers: [("authorization", "bearer not.a.token"), ("apns-topic", MockFixture.bundleID)]), 403,
                "InvalidProviderToken"
            ),
            (
                request(headers: [
                    ("authorization", "bearer \(try jwt(fixture, key: try PrivateKey.generateP256()))"),
                    ("apns-topic", MockFixture.bundleID),
                ]), 403, "InvalidProviderToken"
            ),
            (
                request(headers: [
                    ("authorization", "bearer \(try jwt(fixture, keyID: "UNKNOWNKEY"))"), ("apns-topic", MockFixture.bundleID),
                ]), 403, "InvalidProviderToken"
            ),
            (
                request(headers: [
                    ("authorization", "bearer \(try jwt(fixture, issuedAt: APNSClockNow() - 3700))"), ("apns-topic", MockFixture.bundleID),
                ]), 403, "ExpiredProviderToken"
            ),
            (
                request(headers: [
                    ("authorization", "bearer \(try jwt(fixture, issuedAt: APNSClockNow() + 120))"), ("apns-topic", MockFixture.bundleID),
                ]), 403, "InvalidProviderToken"
            ),
            (request(path: "/3/other/\(Self.token)", headers: base), 404, "BadPath"),
            (request(method: "GET", headers: base, body: nil), 405, "MethodNotAllowed"),
            (request(headers: base, body: "{\"a\":\"" + String(repeating: "x", count: 4100) + "\"}"), 413, "PayloadTooLarge"),
        ]
        for (request, status, reason) in cases {
            let (gotStatus, gotReason, _) = try await answer(connection, request)
            #expect(gotStatus == status, "\(reason)")
            #expect(gotReason == reason, "\(reason)")
        }

        let dead = "dead" + String(repeating: "00", count: 30)
        let (status, reason, timestamp) = try await answer(connection, request(path: "/3/device/\(dead)", headers: base))
        #expect(status == 410)
        #expect(reason == "Unregistered")
        #expect(timestamp != nil)
        let again = try await answer(connection, request(path: "/3/device/\(dead)", headers: base))
        #expect(again.2 == timestamp, "the 410 timestamp is stable per token")

        // A new token less than 20 minutes after the first on the same connection.
        let early = try jwt(fixture, issuedAt: APNSClockNow() + 60)
        let refresh = try await answer(
            connection,
            request(headers: [("authorization", "bearer \(early)"), ("apns-topic", MockFixture.bundleID)])
        )
        #expect(refresh.0 == 429)
        #expect(refresh.1 == "TooManyProviderTokenUpdates")

        let stats = fixture.stats
        #expect(stats.byStatus[400, default: 0] >= 12)
        #expect(stats.byReason["Unregistered"] == 2)
        try await connection.close().get()
        try await fixture.stop()
    }

    /// Each push type's topic, as Apple documents it, written out here rather than taken from
    /// `APNSPushType` (so the mock cannot share a mistake with the worker): with `--topic
    /// com.example.app`, the right suffix is accepted and a wrong or missing one is TopicDisallowed.
    @Test func theTopicMustCarryThePushTypesSuffix() async throws {
        let fixture = try await MockFixture.start { $0.topics = ["com.example.app"] }
        let connection = try await fixture.connect()
        let good = try jwt(fixture)
        func send(_ pushType: String, _ topic: String, priority: String? = nil) async throws -> (Int, String?) {
            var headers = [("authorization", "bearer \(good)"), ("apns-topic", topic), ("apns-push-type", pushType)]
            if let priority { headers.append(("apns-priority", priority)) }
            let (status, reason, _) = try await answer(connection, request(headers: headers))
            return (status, reason)
        }
        let accepted: [(String, String)] = [
            ("alert", "com.example.app"),
            ("background", "com.example.app"),
            ("voip", "com.example.app.voip"),
            ("complication", "com.example.app.complication"),
            ("fileprovider", "com.example.app.pushkit.fileprovider"),
            ("location", "com.example.app.location-query"),
            ("liveactivity", "com.example.app.push-type.liveactivity"),
            ("pushtotalk", "com.example.app.voip-ptt"),
            ("widgets", "com.example.app.push-type.widgets"),
            ("controls", "com.example.app.push-type.controls"),
        ]
        for (pushType, topic) in accepted {
            let (status, reason) = try await send(pushType, topic, priority: pushType == "background" ? "5" : nil)
            #expect(status == 200, "\(pushType) to \(topic): \(reason ?? "-")")
        }
        let refused: [(String, String)] = [
            ("widgets", "com.example.app"),
            ("controls", "com.example.app"),
            ("controls", "com.example.app.push-type.widgets"),
            ("liveactivity", "com.example.app"),
            ("voip", "com.example.app"),
            ("alert", "com.example.app.voip"),
            ("alert", "com.example.app.push-type.widgets"),
            ("widgets", "com.other.app.push-type.widgets"),
        ]
        for (pushType, topic) in refused {
            let (status, reason) = try await send(pushType, topic)
            #expect(status == 400 && reason == "TopicDisallowed", "\(pushType) to \(topic): \(status) \(reason ?? "-")")
        }
        let backgroundNow = try await send("background", "com.example.app", priority: "10")
        #expect(backgroundNow.0 == 400 && backgroundNow.1 == "BadPriority")
        try await connection.close().get()
        try await fixture.stop()
    }

    @Test func injectedFailuresUseAPNsReasons() async throws {
        for (flag, status, reason) in [
            ("429", 429, "TooManyRequests"), ("500", 500, "InternalServerError"), ("503", 503, "ServiceUnavailable"),
        ] {
            let fixture = try await MockFixture.start(tokenAuth: false) { configuration in
                switch flag {
                case "429": configuration.rate429 = 1
                case "500": configuration.rate500 = 1
                default: configuration.rate503 = 1
                }
            }
            let connection = try await fixture.connect()
            let got = try await answer(connection, request(headers: [("apns-topic", MockFixture.bundleID)]))
            #expect(got.0 == status)
            #expect(got.1 == reason)
            try await connection.close().get()
            try await fixture.stop()
        }
    }

    @Test func unregisteredFractionIsStableAndNearTheRate() async throws {
        let rule = UnregisteredRule(listed: [], fraction: 0.05)
        var dead = 0
        for index in 0..<20_000 {
            let token = String(format: "%064x", index)
            if let since = rule.unregisteredSince(token) {
                dead += 1
                #expect(rule.unregisteredSince(token) == since)
            }
        }
        #expect((800...1200).contains(dead), "\(dead) of 20000 at 5%")
    }

    @Test func certificateTrustTakesTheTopicFromTheCertificate() async throws {
        let authority = try CertificateAuthority.create()
        let directory = try ProjectPaths.temporaryDirectory("client-ca")
        let caFile = directory.appendingPathComponent("client-ca.pem").path
        try (try authority.certificate.pem()).write(toFile: caFile, atomically: true, encoding: .utf8)
        let fixture = try await MockFixture.start(tokenAuth: false) { $0.clientCAFile = caFile }
        let client = try authority.issueClientCertificate(
            subject: DistinguishedName([.init("UID", MockFixture.bundleID), .init("CN", "Apple Push Services: \(MockFixture.bundleID)")])
        )
        let connection = try await fixture.connect(identity: .certifiedKey(client))
        #expect(try await answer(connection, request(headers: [])).0 == 200)
        #expect(
            try await answer(connection, request(headers: [("apns-topic", MockFixture.bundleID + ".voip"), ("apns-push-type", "voip")])).0
                == 200
        )
        let other = try await answer(connection, request(headers: [("apns-topic", "com.other.app")]))
        #expect(other.0 == 400)
        #expect(other.1 == "BadTopic")
        try await connection.close().get()
        try await fixture.stop()
    }
}

/// Unix seconds now.
func APNSClockNow() -> Int64 {
    Int64(Date().timeIntervalSince1970)
}
