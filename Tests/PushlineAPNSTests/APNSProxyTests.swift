import PushlineAPNS
import PushlineAPNSCore
import PushlineTLS
import PushlineTestSupport
import Synchronization
import Testing

/// The pool tunnelling through an HTTP CONNECT proxy on loopback to the mock: TLS stays end to
/// end (the proxy sees the CONNECT request, then a TLS handshake).
@Suite struct APNSProxyTests {
    func client(_ fixture: MockFixture, proxy: APNSProxy, connections: Int = 2) throws -> APNSClient {
        try APNSClient(
            configuration: APNSClientConfiguration(
                endpoint: APNSEndpoint(host: "127.0.0.1", port: fixture.port),
                proxy: proxy,
                caFile: fixture.caFile,
                connections: connections,
                connectSpacing: .zero,
                retryPolicy: RetryPolicy(maxAttempts: 1)
            ),
            credential: try .token(keyFile: fixture.keyFile, keyID: MockFixture.keyID, teamID: MockFixture.teamID)
        )
    }

    @Test func notificationsGoThroughTheTunnelWithTLSEndToEnd() async throws {
        let fixture = try await MockFixture.start()
        let proxy = try await ConnectProxy()
        let client = try client(
            fixture,
            proxy: APNSProxy(host: "127.0.0.1", port: proxy.port, authorization: "Basic cHVzaGxpbmU6czNjcmV0")
        )
        client.start()
        let outcomes = Mutex<[Int: Int]>([:])
        client.send((0..<500).map { APNSClientTests.notification($0) }) { index, outcome in
            outcomes.withLock { $0[index] = outcome.status }
        }
        try await waitUntil("500 outcomes", timeout: .seconds(60)) { outcomes.withLock { $0.count } == 500 }
        #expect(outcomes.withLock { $0.values.allSatisfy { $0 == 200 } })
        await client.shutdown()

        let tunnels = proxy.tunnels
        #expect(tunnels.count == 2, "one tunnel per connection: \(tunnels)")
        for tunnel in tunnels {
            #expect(tunnel.head.hasPrefix("CONNECT 127.0.0.1:\(fixture.port) HTTP/1.1\r\n"), "\(tunnel.head)")
            #expect(tunnel.head.contains("\r\nProxy-Authorization: Basic cHVzaGxpbmU6czNjcmV0"))
            #expect(tunnel.firstByte == 0x16, "the first byte through the tunnel starts a TLS handshake")
        }
        #expect(fixture.stats.requests == 500)
        await proxy.stop()
        try await fixture.stop()
    }

    @Test func aProxyThatRefusesEndsRequestsAsConnectionFailures() async throws {
        let fixture = try await MockFixture.start()
        let proxy = try await ConnectProxy(refuseWith: 407)
        let client = try client(fixture, proxy: APNSProxy(host: "127.0.0.1", port: proxy.port), connections: 1)
        client.start()
        let outcome = Mutex<APNSOutcome?>(nil)
        client.send(APNSClientTests.notification(1), options: APNSSendOptions(deadline: .now + .milliseconds(800))) { result in
            outcome.withLock { $0 = result }
        }
        try await waitUntil("an outcome", timeout: .seconds(10)) { outcome.withLock { $0 } != nil }
        #expect(outcome.withLock { $0 }?.status == 0)
        #expect(!client.status().isReady)
        #expect(proxy.tunnels.first?.head.hasPrefix("CONNECT ") == true)
        #expect(fixture.stats.requests == 0, "nothing reached APNs")
        await client.shutdown()
        await proxy.stop()
        try await fixture.stop()
    }
}
