import Foundation
import NIOCore
import PushlineAPNSCore
import PushlineAPNSMock
import PushlineHTTP2
import PushlineTLS
import PushlineTestSupport
import Testing

@Suite struct MockLimitTests {
    static let token = String(repeating: "cd", count: 32)

    func request(_ jwt: String?) -> HTTP2Request {
        var headers = [HTTP2Header("apns-topic", MockFixture.bundleID, neverIndex: true)]
        if let jwt { headers.append(HTTP2Header("authorization", "bearer \(jwt)", neverIndex: true)) }
        return HTTP2Request(authority: "127.0.0.1", path: "/3/device/\(Self.token)", headers: headers, body: ByteBuffer(string: "{}"))
    }

    @Test func oneStreamUntilAValidTokenSucceeds() async throws {
        let fixture = try await MockFixture.start { $0.maxStreams = 50 }
        let connection = try await fixture.connect()
        try await waitUntil("first SETTINGS") { try await connection.peerMaxConcurrentStreams().get() == 1 }
        let jwt = try ProviderToken(keyID: MockFixture.keyID, teamID: MockFixture.teamID, issuedAt: APNSClockNow()) {
            try ES256.sign($0, with: fixture.signingKey)
        }.jwt
        // A rejected request does not open the connection up.
        #expect(try await connection.send(request(nil)).get().status == 403)
        #expect(try await connection.peerMaxConcurrentStreams().get() == 1)
        #expect(try await connection.send(request(jwt)).get().status == 200)
        try await waitUntil("limit raised to 50") { try await connection.peerMaxConcurrentStreams().get() == 50 }
        #expect(fixture.stats.maxAdvertisedLimit == 50)
        #expect(fixture.stats.maxOpenStreamsWhileProbing <= 1)
        try await connection.close().get()
        try await fixture.stop()
    }

    @Test func goawayLeavesStreamsAboveLastStreamIDUnanswered() async throws {
        let fixture = try await MockFixture.start(tokenAuth: false) { configuration in
            configuration.goawayEvery = 5
            configuration.latencyMilliseconds = 50
        }
        let connection = try await fixture.connect()
        try await waitUntil("first SETTINGS") { try await connection.peerMaxConcurrentStreams().get() == 1000 }
        let futures = (0..<10).map { _ in connection.send(request(nil)) }
        var answered: [Int32] = []
        var unprocessed = 0
        for future in futures {
            do {
                answered.append(try await future.get().streamID)
            } catch let error as HTTP2StreamError {
                #expect(error.isUnprocessed, "\(error)")
                unprocessed += 1
            }
        }
        #expect(answered.count == 5)
        #expect(unprocessed == 5)
        #expect(answered.max() == 9, "streams 1,3,5,7,9 answered; 9 is the GOAWAY's last-stream-id")
        #expect(fixture.stats.goawaysSent == 1)
        try await fixture.stop()
    }

    @Test func statsFileHasTheContractKeys() async throws {
        let directory = try ProjectPaths.temporaryDirectory("stats")
        let path = directory.appendingPathComponent("stats.json").path
        let fixture = try await MockFixture.start(tokenAuth: false) { $0.statsFile = path }
        let connection = try await fixture.connect()
        for _ in 0..<3 { _ = try await connection.send(request(nil)).get() }
        try await connection.close().get()
        try await fixture.stop()
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        for key in ["requests", "by_status", "by_reason", "connections", "max_open_streams", "limit_violations"] {
            #expect(object[key] != nil, "\(key)")
        }
        #expect(object["requests"] as? Int == 3)
        #expect((object["by_status"] as? [String: Int])?["200"] == 3)
    }
}
