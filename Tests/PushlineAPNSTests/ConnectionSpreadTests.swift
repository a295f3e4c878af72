import Foundation
import NIOCore
import PushlineAPNS
import PushlineAPNSCore
import PushlineAPNSMock
import PushlineTLS
import PushlineTestSupport
import Synchronization
import Testing

/// Apple's guidance for high-volume providers, through real TLS and HTTP/2: a pool opens its
/// connections a few seconds apart rather than all at once, resolves the host for each, and
/// spreads them over the addresses the name resolves to. The name here resolves to three
/// loopback addresses (127.0.0.1, .2, .3), each served by its own mock with one certificate for
/// the name.
@Suite struct ConnectionSpreadTests {
    static let host = "apns.pushline.test"

    /// Three mocks, one per loopback address, sharing one identity for `host` and one signing key.
    struct Servers {
        var servers: [MockAPNSServer]
        var caFile: String
        var keyFile: String

        static func start(addresses: [String]) async throws -> Servers {
            let directory = try ProjectPaths.temporaryDirectory("spread")
            let identity = try SelfSignedIdentity.generate(into: directory.appendingPathComponent("tls").path, host: host)
            let key = try PrivateKey.generateP256()
            let keyFile = directory.appendingPathComponent("AuthKey_\(MockFixture.keyID).p8").path
            try key.writePEM(to: keyFile)
            var servers: [MockAPNSServer] = []
            for address in addresses {
                var configuration = MockConfiguration()
                configuration.host = address
                configuration.port = 0
                configuration.threads = 1
                configuration.authKeys[MockFixture.keyID] = .init(
                    keyID: MockFixture.keyID,
                    teamID: MockFixture.teamID,
                    publicKeyPEM: try key.publicKeyPEM()
                )
                servers.append(try await MockAPNSServer.start(configuration, identity: identity))
            }
            return Servers(servers: servers, caFile: directory.appendingPathComponent("tls/ca.pem").path, keyFile: keyFile)
        }

        func stop() async throws {
            for server in servers { try await server.shutdown() }
        }
    }

    /// A resolver for `host` that answers `addresses` and notes when each connect resolved.
    final class RecordingResolver: Sendable {
        let addresses: [SocketAddress]
        let times = Mutex<[ContinuousClock.Instant]>([])

        init(addresses: [SocketAddress]) {
            self.addresses = addresses
        }

        var resolver: HostResolver {
            HostResolver { [self] name, _ in
                guard name == ConnectionSpreadTests.host else { throw HostResolverError(host: name, message: "unknown") }
                times.withLock { $0.append(.now) }
                return addresses
            }
        }
    }

    func client(
        _ servers: Servers,
        resolver: HostResolver,
        connections: Int,
        spacing: Duration
    ) throws -> APNSClient {
        try APNSClient(
            configuration: APNSClientConfiguration(
                endpoint: APNSEndpoint(host: Self.host, port: servers.servers[0].port),
                caFile: servers.caFile,
                connections: connections,
                connectSpacing: spacing,
                resolver: resolver,
                connectTimeout: .seconds(2)
            ),
            credential: try .token(keyFile: servers.keyFile, keyID: MockFixture.keyID, teamID: MockFixture.teamID)
        )
    }

    @Test func aPoolOpensItsConnectionsApartAndOnDifferentAddresses() async throws {
        let servers = try await Servers.start(addresses: ["127.0.0.1", "127.0.0.2", "127.0.0.3"])
        let addresses = try servers.servers.map { try SocketAddress(ipAddress: $0.host, port: $0.port) }
        let recording = RecordingResolver(addresses: addresses)
        let spacing = Duration.milliseconds(400)
        let client = try client(servers, resolver: recording.resolver, connections: 3, spacing: spacing)
        let started = ContinuousClock.now
        client.start()
        try await waitUntil("three connections up", timeout: .seconds(30)) {
            client.status().connections.allSatisfy { $0.state == .active }
        }
        // One connection on each address, each address's mock serving one.
        let open = client.openConnectionsByAddress
        #expect(Set(open.keys) == Set(addresses), "\(open)")
        #expect(open.values.allSatisfy { $0 == 1 }, "\(open)")
        #expect(servers.servers.map { $0.stats.snapshot().connections } == [1, 1, 1])
        // Resolved once per connection, the first at once and each next one a spacing later.
        let times = recording.times.withLock { $0 }
        #expect(times.count == 3)
        if times.count == 3 {
            #expect(times[0] - started < spacing)
            for index in 1..<3 {
                #expect(times[index] - times[index - 1] >= spacing * 0.9, "connect \(index) after \(times[index] - times[index - 1])")
            }
        }
        // The three carry notifications.
        let done = Atomic<Int>(0)
        let statuses = Mutex<[Int]>([])
        let notifications = (0..<300).map { APNSClientTests.notification($0) }
        client.send(notifications) { _, outcome in
            statuses.withLock { $0.append(outcome.status) }
            done.wrappingAdd(1, ordering: .relaxed)
        }
        try await waitUntil("300 answers", timeout: .seconds(30)) { done.load(ordering: .relaxed) == 300 }
        #expect(statuses.withLock { $0 }.allSatisfy { $0 == 200 })
        await client.shutdown()
        try await servers.stop()
    }

    @Test func anAddressThatRefusesIsSkippedForTheNextConnect() async throws {
        let servers = try await Servers.start(addresses: ["127.0.0.1", "127.0.0.2"])
        // 127.0.0.4, where nothing listens (the mocks bind their own addresses): refused at once.
        let dead = try SocketAddress(ipAddress: "127.0.0.4", port: servers.servers[0].port)
        let live = try servers.servers.map { try SocketAddress(ipAddress: $0.host, port: $0.port) }
        let recording = RecordingResolver(addresses: [dead] + live)
        let client = try client(servers, resolver: recording.resolver, connections: 3, spacing: .zero)
        client.start()
        try await waitUntil("three connections up", timeout: .seconds(30)) {
            client.status().connections.allSatisfy { $0.state == .active }
        }
        let open = client.openConnectionsByAddress
        #expect(open[dead] == nil, "\(open)")
        #expect(open.values.reduce(0, +) == 3, "\(open)")
        #expect(Set(open.keys) == Set(live), "\(open)")
        await client.shutdown()
        try await servers.stop()
    }
}
