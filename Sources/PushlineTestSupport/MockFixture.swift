import Foundation
import NIOCore
import NIOPosix
import PushlineAPNSMock
import PushlineHTTP2
import PushlineTLS
import Synchronization

/// A running `MockAPNSServer` on a free loopback port with a fresh self-signed CA, a token
/// signing key it trusts, and helpers to reach it. Stop it with `stop()`.
public final class MockFixture: Sendable {
    public static let keyID = "ABC123DEFG"
    public static let teamID = "DEF123GHIJ"
    public static let bundleID = "com.example.app"

    public let server: MockAPNSServer
    public let directory: URL
    /// The CA that signed the server certificate (`apns.ca_file`).
    public let caFile: String
    /// The `.p8` signing key the mock trusts (mode 0600).
    public let keyFile: String
    public let signingKey: PrivateKey
    public var port: Int { server.port }
    public var endpoint: String { "127.0.0.1:\(server.port)" }
    public var stats: MockStats.Snapshot { server.stats.snapshot() }

    /// Starts a mock; `tokenAuth` registers `signingKey` under `keyID`/`teamID`.
    public static func start(
        tokenAuth: Bool = true,
        _ configure: (inout MockConfiguration) throws -> Void = { _ in }
    ) async throws -> MockFixture {
        let directory = try ProjectPaths.temporaryDirectory("mock")
        let identity = try SelfSignedIdentity.generate(into: directory.appendingPathComponent("tls").path, host: "127.0.0.1")
        let key = try PrivateKey.generateP256()
        let keyFile = directory.appendingPathComponent("AuthKey_\(keyID).p8").path
        try key.writePEM(to: keyFile)
        var configuration = MockConfiguration()
        configuration.host = "127.0.0.1"
        configuration.port = 0
        configuration.threads = 2
        if tokenAuth {
            configuration.authKeys[keyID] = .init(keyID: keyID, teamID: teamID, publicKeyPEM: try key.publicKeyPEM())
        }
        try configure(&configuration)
        let server = try await MockAPNSServer.start(configuration, identity: identity)
        return MockFixture(
            server: server,
            directory: directory,
            caFile: directory.appendingPathComponent("tls/ca.pem").path,
            keyFile: keyFile,
            signingKey: key
        )
    }

    private init(server: MockAPNSServer, directory: URL, caFile: String, keyFile: String, signingKey: PrivateKey) {
        self.server = server
        self.directory = directory
        self.caFile = caFile
        self.keyFile = keyFile
        self.signingKey = signingKey
    }

    public func stop() async throws {
        try await server.shutdown()
    }

    /// A plain HTTP/2-over-TLS client connection to the mock (the transport's own client).
    ///
    /// - Parameter alpn: false offers no ALPN at all (HTTP/2 with prior knowledge, as some clients do).
    public func connect(
        identity: TLSConfiguration.Identity? = nil,
        alpn: Bool = true,
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) async throws -> HTTP2ClientConnection {
        var tls = TLSConfiguration.client(serverHostname: "127.0.0.1", trustRoots: .caFile(caFile))
        tls.identity = identity
        if !alpn { tls.alpnProtocols = [] }
        let context = try TLSContext(configuration: tls)
        // Both handlers go in before any byte arrives: the server's SETTINGS may come with the
        // last handshake flight.
        let channel = try await ClientBootstrap(group: group)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandlers([TLSHandler(context: context), HTTP2ClientHandler()])
                }
            }
            .connect(host: "127.0.0.1", port: port).get()
        return try await HTTP2ClientConnection.existing(in: channel).get()
    }
}

/// A wall clock tests can move (unix seconds), shared by a client and the mock.
public final class TestClock: Sendable {
    private let seconds: Atomic<Int64>

    public init(_ start: Int64 = Int64(Date().timeIntervalSince1970)) {
        seconds = Atomic(start)
    }

    public var now: Int64 { seconds.load(ordering: .relaxed) }

    public func advance(by delta: Int64) {
        seconds.wrappingAdd(delta, ordering: .relaxed)
    }

    public func set(_ value: Int64) {
        seconds.store(value, ordering: .relaxed)
    }
}
