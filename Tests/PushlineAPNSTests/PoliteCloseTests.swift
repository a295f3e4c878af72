import PushlineAPNS
import PushlineAPNSCore
import PushlineAPNSMock
import PushlineTestSupport
import Synchronization
import Testing

/// The client's polite close against the mock, over real TLS and HTTP/2 on loopback: GOAWAY
/// (NO_ERROR), the open streams end, then TCP closes.
@Suite struct PoliteCloseTests {
    func client(_ fixture: MockFixture, connections: Int, closeTimeout: Duration = .seconds(5)) throws -> APNSClient {
        try APNSClient(
            configuration: APNSClientConfiguration(
                endpoint: APNSEndpoint(host: "127.0.0.1", port: fixture.port),
                caFile: fixture.caFile,
                connections: connections,
                connectSpacing: .zero,
                requestTimeout: .seconds(120),
                retryPolicy: RetryPolicy(maxAttempts: 1),
                closeTimeout: closeTimeout
            ),
            credential: try .token(keyFile: fixture.keyFile, keyID: MockFixture.keyID, teamID: MockFixture.teamID)
        )
    }

    /// Outcomes by index, as they arrive.
    final class Outcomes: Sendable {
        private let byIndex = Mutex<[Int: [APNSOutcome]]>([:])
        func add(_ index: Int, _ outcome: APNSOutcome) { byIndex.withLock { $0[index, default: []].append(outcome) } }
        func withLock<T>(_ body: ([Int: [APNSOutcome]]) -> T) -> T { byIndex.withLock { body($0) } }
    }

    /// Sends `count` notifications; their outcomes collect in the returned box.
    func send(_ client: APNSClient, _ count: Int) -> Outcomes {
        let outcomes = Outcomes()
        client.send((0..<count).map { APNSClientTests.notification($0) }) { index, outcome in outcomes.add(index, outcome) }
        return outcomes
    }

    @Test func aShutdownSendsOneGoAwayPerConnection() async throws {
        let fixture = try await MockFixture.start()
        let client = try client(fixture, connections: 3)
        client.start()
        try await waitUntil("three connections up") { client.status().connections.allSatisfy { $0.state == .active } }
        let outcomes = send(client, 300)
        try await waitUntil("300 outcomes") { outcomes.withLock { $0.count } == 300 }
        #expect(outcomes.withLock { $0.values.allSatisfy { $0.count == 1 && $0[0].status == 200 } })
        #expect(fixture.stats.goawaysReceived == 0)
        await client.shutdown()
        try await waitUntil("the mock sees every connection closed") { fixture.stats.openConnections == 0 }
        let stats = fixture.stats
        #expect(stats.connections == 3)
        #expect(stats.goawaysReceived == 3, "one GOAWAY per connection: \(stats.goawaysReceived)")
        try await fixture.stop()
    }

    /// Streams in flight when the pool shuts down are answered before the connection closes.
    @Test func aShutdownWaitsForTheStreamsInFlight() async throws {
        let fixture = try await MockFixture.start(tokenAuth: false) { $0.latencyMilliseconds = 500 }
        let client = try client(fixture, connections: 1)
        client.start()
        // The first answer opens the connection up (the client probes a token connection with one stream).
        #expect(await client.send(APNSClientTests.notification(100)).status == 200)
        let outcomes = send(client, 20)
        try await waitUntil("20 streams open at the mock") { fixture.stats.maxOpenStreams == 20 }
        await client.shutdown()
        let ended = outcomes.withLock { $0 }
        #expect(ended.count == 20)
        #expect(ended.values.allSatisfy { $0.count == 1 && $0[0].status == 200 }, "\(ended.values.prefix(3))")
        try await waitUntil("the mock sees the connection closed") { fixture.stats.openConnections == 0 }
        #expect(fixture.stats.goawaysReceived == 1)
        #expect(fixture.stats.requests == 21)
        try await fixture.stop()
    }

    /// A stream the server never answers does not hold the shutdown beyond `closeTimeout`.
    @Test func thePoliteCloseIsBounded() async throws {
        let fixture = try await MockFixture.start(tokenAuth: false) { $0.latencyMilliseconds = 600_000 }
        let client = try client(fixture, connections: 1, closeTimeout: .seconds(1))
        client.start()
        let outcomes = send(client, 1)
        try await waitUntil("the stream open at the mock") { fixture.stats.maxOpenStreams == 1 }
        let started = ContinuousClock.now
        await client.shutdown()
        let elapsed = ContinuousClock.now - started
        // The bound is the point here: 1 s asked for, and the only other way out is the request
        // timeout (120 s). 60 s leaves a loaded machine all the room it could need.
        #expect(elapsed < .seconds(60), "\(elapsed)")
        let ended = outcomes.withLock { $0 }
        #expect(ended[0]?.count == 1)
        #expect(ended[0]?.first?.status == 0, "not answered: \(String(describing: ended[0]))")
        try await waitUntil("the mock sees the connection closed") { fixture.stats.openConnections == 0 }
        #expect(fixture.stats.goawaysReceived == 1)
        try await fixture.stop()
    }
}
