import NIOCore
import PushlineAPNSMock
import PushlineHTTP2
import PushlineHTTP2Server
import PushlineTestSupport
import Testing

/// nghttp2's rapid-reset guard in the mock: a flag with a stated default, and counted.
@Suite struct MockResetLimitTests {
    static let token = String(repeating: "cd", count: 32)

    @Test func theFlagTakesBurstAndRateOrOff() throws {
        var configuration = MockConfiguration()
        #expect(configuration.resetRateLimit == .nghttp2Default)
        #expect(MockConfiguration.defaultResetRateLimit == "1000:33")
        try configuration.setResetRateLimit(parsing: "20000:100")
        #expect(configuration.resetRateLimit == HTTP2ResetRateLimit(burst: 20000, perSecond: 100))
        try configuration.setResetRateLimit(parsing: "off")
        #expect(configuration.resetRateLimit.isUnlimited)
        #expect(configuration.resetRateLimit.description == "off")
        for bad in ["", "1000", "0:33", "a:1", "1000:-1", "1:2:3", "18446744073709551615:0"] {
            #expect(throws: MockError.self, "\(bad)") { try configuration.setResetRateLimit(parsing: bad) }
        }
    }

    /// Cancels `count` requests the mock holds (a long latency keeps them open), on one connection:
    /// a RST_STREAM each. They are cancelled once the mock has them all open: a stream cancelled
    /// before its HEADERS left is dropped by nghttp2 and never reset on the wire (a fixed delay
    /// before cancelling lost that race on a loaded host).
    func cancel(_ count: Int, on connection: HTTP2ClientConnection, of fixture: MockFixture) async throws {
        let request = HTTP2Request(authority: "127.0.0.1", path: "/3/device/\(Self.token)", body: ByteBuffer(string: "{}"))
        let eventLoop = connection.channel.eventLoop
        // (On the loop, as `withHandler` runs there: the handler never leaves it.)
        let ids = try await connection.withHandler { handler in
            eventLoop.makeSucceededFuture((0..<count).compactMap { _ in handler.submit(request, promise: eventLoop.makePromise()) })
        }.get()
        try await waitUntil("the mock holds the requests") { fixture.stats.maxOpenStreams >= count }
        try await connection.withHandler { handler in
            for id in ids { handler.cancel(streamID: id) }
            return eventLoop.makeSucceededVoidFuture()
        }.get()
    }

    func receivedGoAway(_ connection: HTTP2ClientConnection) async throws -> HTTP2GoAway? {
        let eventLoop = connection.channel.eventLoop
        return try await connection.withHandler { handler in eventLoop.makeSucceededFuture(handler.receivedGoAway) }.get()
    }

    @Test func resetsBeyondTheBurstEndTheConnectionWithGoAwayAndAreCounted() async throws {
        let fixture = try await MockFixture.start(tokenAuth: false) { configuration in
            configuration.latencyMilliseconds = 60_000
            configuration.resetRateLimit = HTTP2ResetRateLimit(burst: 5, perSecond: 0)
        }
        let connection = try await fixture.connect()
        try await waitUntil("first SETTINGS") { try await connection.peerMaxConcurrentStreams().get() == 1000 }
        try await cancel(6, on: connection, of: fixture)
        try await waitUntil("the mock's GOAWAY") { try await receivedGoAway(connection) != nil }
        #expect(try await receivedGoAway(connection)?.errorCode == .internalError)
        try await waitUntil("the stats") { fixture.stats.resetLimitGoaways == 1 && fixture.stats.clientResets == 6 }
        #expect(fixture.stats.goawaysSent == 0, "not the mock's chaos")
        try? await connection.close().get()
        try await fixture.stop()
    }

    @Test func resetsWithinTheBurstLeaveTheConnectionAlone() async throws {
        let fixture = try await MockFixture.start(tokenAuth: false) { configuration in
            configuration.latencyMilliseconds = 60_000
            configuration.resetRateLimit = HTTP2ResetRateLimit(burst: 6, perSecond: 0)
        }
        let connection = try await fixture.connect()
        try await waitUntil("first SETTINGS") { try await connection.peerMaxConcurrentStreams().get() == 1000 }
        try await cancel(6, on: connection, of: fixture)
        try await waitUntil("the resets counted") { fixture.stats.clientResets == 6 }
        // A PING answered after the sixth reset: a GOAWAY for it would have been written first.
        _ = try await connection.ping().get()
        #expect(try await receivedGoAway(connection) == nil)
        #expect(fixture.stats.resetLimitGoaways == 0)
        try await connection.close().get()
        try await fixture.stop()
    }
}
