import NIOCore
import NIOPosix
import PushlineTestSupport
import Testing

@testable import PushlineHTTP2

/// Client and server over real TCP on loopback (h2c with prior knowledge).
@Suite struct TCPTests {
    @Test func tenThousandConcurrentRequestsStayWithinTheServerLimit() async throws {
        let server = try await TestServer.start(maxConcurrentStreams: 100)
        let connection = try await connectClient(port: server.port)
        let body = ByteBuffer(string: #"{"aps":{"alert":"hello"}}"#)
        let clock = ContinuousClock()
        let started = clock.now
        // All submitted at once: nghttp2 holds back what exceeds the limit (the pool must not rely on that).
        let futures = (0..<10_000).map { index in
            connection.send(HTTP2Request(authority: "localhost", path: "/3/device/\(index)", body: body))
        }
        var succeeded = 0
        for future in futures where try await future.get().status == 200 { succeeded += 1 }
        let elapsed = clock.now - started
        print("10k requests over one connection (limit 100): \(elapsed), \(Int(10_000 / elapsed.seconds)) req/s")
        #expect(succeeded == 10_000)
        let observed = server.probe.snapshot
        #expect(observed.requests == 10_000)
        #expect(observed.maxOpenStreams <= 100)
        #expect(observed.maxOpenStreams > 1)
        #expect(observed.limitViolations == 0)
        #expect(try await connection.openStreams().get() == 0)
        try await connection.close().get()
        try await server.stop()
    }

    @Test func refusedStreamsAreSurfacedAsRefused() async throws {
        let server = try await TestServer.start(behavior: .refuseEvery(3))
        let connection = try await connectClient(port: server.port)
        var refused = 0
        var answered = 0
        for index in 0..<30 {
            do {
                _ = try await connection.send(HTTP2Request(authority: "localhost", path: "/\(index)")).get()
                answered += 1
            } catch let error as HTTP2StreamError {
                #expect(error.kind == .refused && error.isUnprocessed)
                refused += 1
            }
        }
        #expect(refused == 10 && answered == 20)
        try await connection.close().get()
        try await server.stop()
    }

    @Test func goAwaySeparatesAnsweredFromUnprocessedStreams() async throws {
        let server = try await TestServer.start(behavior: .goAwayAfter(count: 10, lastStreamID: 9))
        let delegate = ProbeClientDelegate()
        let connection = try await connectClient(port: server.port, delegate: delegate)
        // Wait for the server's SETTINGS so all 10 streams open together.
        try await waitUntil("peer SETTINGS") { try await connection.peerMaxConcurrentStreams().get() == 100 }
        let futures = (0..<10).map { connection.send(HTTP2Request(authority: "localhost", path: "/\($0)")) }
        for (index, future) in futures.enumerated() {
            let streamID = Int32(index * 2 + 1)
            if streamID <= 9 {
                #expect(try await future.get().status == 200)
            } else {
                await #expect(throws: HTTP2StreamError(.goAway(lastStreamID: 9, errorCode: .noError), streamID: streamID)) {
                    try await future.get()
                }
            }
        }
        let goAways = delegate.state.withLock { $0.goAways }
        #expect(goAways.map(\.lastStreamID) == [9])
        #expect(goAways.first?.debugText == #"{"reason":"Shutdown"}"#)
        await #expect(throws: HTTP2StreamError.self) {
            try await connection.send(HTTP2Request(authority: "localhost", path: "/late")).get()
        }
        // Both sides are done: the connection closes by itself.
        try await connection.channel.closeFuture.get()
        try await server.stop()
    }

    @Test func serverSettingsChangeReachesTheClient() async throws {
        let server = try await TestServer.start(maxConcurrentStreams: 1, behavior: .raiseLimitAfterFirst(to: 300))
        let delegate = ProbeClientDelegate()
        let connection = try await connectClient(port: server.port, delegate: delegate)
        _ = try await connection.send(HTTP2Request(authority: "localhost", path: "/first")).get()
        try await waitUntil("raised limit observed") { delegate.state.withLock { $0.peerMaxValues } == [1, 300] }
        #expect(try await connection.peerMaxConcurrentStreams().get() == 300)
        let available = try await connection.withHandler { $0.eventLoop!.makeSucceededFuture($0.availableStreams) }.get()
        #expect(available == 300)
        try await connection.close().get()
        try await server.stop()
    }

    @Test func pingMeasuresRoundTripTime() async throws {
        let server = try await TestServer.start()
        let connection = try await connectClient(port: server.port)
        let rtt = try await connection.ping().get()
        #expect(rtt > .zero && rtt < .seconds(5))
        try await connection.close().get()
        try await server.stop()
    }

    @Test func closedLoopThroughput() async throws {
        let server = try await TestServer.start(maxConcurrentStreams: 1000)
        var connections: [HTTP2ClientConnection] = []
        for _ in 0..<4 { connections.append(try await connectClient(port: server.port)) }
        let body = ByteBuffer(string: #"{"aps":{"alert":"hello"}}"#)
        let perConnection = 25_000
        let clock = ContinuousClock()
        let started = clock.now
        let results = connections.map { runClosedLoop($0, total: perConnection, body: body) }
        var succeeded = 0
        for result in results { succeeded += try await result.get().succeeded }
        let elapsed = clock.now - started
        print("closed loop, 4 connections x \(perConnection): \(elapsed), \(Int(Double(succeeded) / elapsed.seconds)) req/s")
        #expect(succeeded == 4 * perConnection)
        #expect(server.probe.snapshot.maxOpenStreams <= 1000)
        #expect(server.probe.snapshot.limitViolations == 0)
        for connection in connections { try await connection.close().get() }
        try await server.stop()
    }
}

extension Duration {
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
