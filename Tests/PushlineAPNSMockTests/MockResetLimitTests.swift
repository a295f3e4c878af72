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

    /// Cancels `count` requests the mock holds (a long latency keeps them open), on one connection.
    func cancel(_ count: Int, on connection: HTTP2ClientConnection) async throws {
        let request = HTTP2Request(authority: "127.0.0.1", path: "/3/device/\(Self.token)", body: ByteBuffer(string: "{}"))
        let eventLoop = connection.channel.eventLoop
        try await connection.withHandler { handler in
            let ids = (0..<count).map { _ in handler.submit(request, promise: eventLoop.makePromise()) }
            // Cancelled a tick later, once their HEADERS are out: a RST_STREAM each.
            // (On the loop, as `withHandler` runs there: the handler never leaves it.)
            return eventLoop.assumeIsolated().scheduleTask(in: .milliseconds(50)) {
                for id in ids { if let id { handler.cancel(streamID: id) } }
            }.futureResult
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
        try await cancel(6, on: connection)
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
        try await cancel(6, on: connection)
        try await waitUntil("the resets counted") { fixture.stats.clientResets == 6 }
        // A PING answered after the sixth reset: a GOAWAY for it would have been written first.
        _ = try await connection.ping().get()
        #expect(try await receivedGoAway(connection) == nil)
        #expect(fixture.stats.resetLimitGoaways == 0)
        try await connection.close().get()
        try await fixture.stop()
    }
}
