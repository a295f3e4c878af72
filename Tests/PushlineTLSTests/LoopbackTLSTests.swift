import NIOCore
import NIOPosix
import PushlineTLS
import PushlineTestCA
import Testing

/// Real TLS over TCP on 127.0.0.1 (port 0) with NIOPosix bootstraps.
@Suite struct LoopbackTLSTests {
    /// A server on 127.0.0.1:0 whose connections are recorded (and echoed when `echo`).
    final class Server: Sendable {
        let channel: any Channel
        let expectations: RecordingHandler.Expectations

        init(group: any EventLoopGroup, configuration: TLSConfiguration, echo: Bool = false) async throws {
            let context = try TLSContext(configuration: configuration)
            let expectations = RecordingHandler.Expectations(eventLoop: group.next())
            self.expectations = expectations
            self.channel = try await ServerBootstrap(group: group)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandlers([
                            TLSHandler(context: context),
                            RecordingHandler(expectations: expectations, echo: echo),
                        ])
                    }
                }
                .bind(host: "127.0.0.1", port: 0).get()
        }

        var port: Int { channel.localAddress!.port! }
    }

    struct Client {
        let channel: any Channel
        let expectations: RecordingHandler.Expectations

        init(group: any EventLoopGroup, port: Int, configuration: TLSConfiguration, expectedBytes: Int = 0) async throws {
            let context = try TLSContext(configuration: configuration)
            let eventLoop = group.next()
            let expectations = RecordingHandler.Expectations(eventLoop: eventLoop, expectedBytes: expectedBytes)
            self.expectations = expectations
            self.channel = try await ClientBootstrap(group: eventLoop)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandlers([
                            TLSHandler(context: context),
                            RecordingHandler(expectations: expectations),
                        ])
                    }
                }
                .connect(host: "127.0.0.1", port: port).get()
        }
    }

    /// Runs `body` with a one-thread event loop group and a server, closing both afterwards.
    func withServer(
        _ configuration: TLSConfiguration,
        echo: Bool = false,
        _ body: (any EventLoopGroup, Server) async throws -> Void
    ) async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        do {
            let server = try await Server(group: group, configuration: configuration, echo: echo)
            do {
                try await body(group, server)
            } catch {
                try? await server.channel.close()
                throw error
            }
            try await server.channel.close()
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
        try await group.shutdownGracefully()
    }

    @Test func alpnH2IsNegotiated() async throws {
        let pki = try TestPKI()
        defer { pki.removeFiles() }
        try await withServer(pki.serverConfiguration()) { group, server in
            let client = try await Client(group: group, port: server.port, configuration: pki.clientConfiguration())
            #expect(try await client.expectations.handshake.futureResult.get() == "h2")
            #expect(try await server.expectations.handshake.futureResult.get() == "h2")
            try await client.channel.close()
        }
    }

    @Test func dnsHostnameVerifies() async throws {
        let pki = try TestPKI()
        defer { pki.removeFiles() }
        try await withServer(pki.serverConfiguration()) { group, server in
            let client = try await Client(group: group, port: server.port, configuration: pki.clientConfiguration(hostname: "localhost"))
            #expect(try await client.expectations.handshake.futureResult.get() == "h2")
            try await client.channel.close()
        }
    }

    @Test(arguments: ["pem", "pkcs12"])
    func clientCertificateAcceptedByServerRequiringIt(format: String) async throws {
        let pki = try TestPKI()
        defer { pki.removeFiles() }
        let identity: TLSConfiguration.Identity =
            format == "pem"
            ? .pemFiles(certificateChain: pki.clientCertificateFile, privateKey: pki.clientKeyFile, password: nil)
            : .pkcs12File(pki.clientPKCS12File, password: TestPKI.p12Password)
        try await withServer(pki.serverConfiguration(requireClientCertificate: true), echo: true) { group, server in
            let client = try await Client(
                group: group,
                port: server.port,
                configuration: pki.clientConfiguration(identity: identity),
                expectedBytes: 5
            )
            #expect(try await client.expectations.handshake.futureResult.get() == "h2")
            #expect(try await server.expectations.handshake.futureResult.get() == "h2")
            // A round trip proves the server accepted the certificate (TLS 1.3 rejects only after the client's handshake).
            try await client.channel.writeAndFlush(ByteBuffer(string: "hello"))
            #expect(try await client.expectations.received.futureResult.get() == ByteBuffer(string: "hello"))
            let subject = try await server.expectations.peerSubject.futureResult.get()
            #expect(subject?.userID == "com.example.app")
            #expect(subject?.commonName == "Apple Push Services: com.example.app")
            try await client.channel.close()
        }
    }

    @Test func clientWithoutCertificateIsRejected() async throws {
        let pki = try TestPKI()
        defer { pki.removeFiles() }
        try await withServer(pki.serverConfiguration(requireClientCertificate: true)) { group, server in
            let client = try await Client(group: group, port: server.port, configuration: pki.clientConfiguration())
            let serverError = try await server.expectations.firstError.futureResult.get()
            guard case TLSError.handshakeFailed(_, let stack) = serverError else {
                Issue.record("server: expected handshakeFailed, got \(serverError)")
                return
            }
            #expect(stack.contains(reason: "peer did not return a certificate"), "\(stack)")
            // The client learns it from the server's alert and its channel closes.
            let clientError = try await client.expectations.firstError.futureResult.get()
            #expect("\(clientError)".contains("certificate required"), "\(clientError)")
            try await client.channel.closeFuture.get()
        }
    }

    @Test func serverSignedByUntrustedCAIsRejected() async throws {
        let pki = try TestPKI()
        defer { pki.removeFiles() }
        let otherCA = try CertificateAuthority.create()
        var configuration = TLSConfiguration.client(serverHostname: "127.0.0.1", trustRoots: .certificates([otherCA.certificate]))
        configuration.alpnProtocols = ["h2"]
        try await withServer(pki.serverConfiguration()) { group, server in
            let client = try await Client(group: group, port: server.port, configuration: configuration)
            let error = try await client.expectations.firstError.futureResult.get()
            guard case TLSError.handshakeFailed(let verification, let stack) = error else {
                Issue.record("expected handshakeFailed, got \(error)")
                return
            }
            // The server sends its CA along, so OpenSSL reports the untrusted self-signed root.
            #expect(
                verification == "self-signed certificate in certificate chain" || verification == "unable to get local issuer certificate",
                "\(error)"
            )
            #expect(stack.contains(reason: "certificate verify failed"))
            try await client.channel.closeFuture.get()
        }
    }

    @Test func wrongHostnameIsRejected() async throws {
        let pki = try TestPKI()
        defer { pki.removeFiles() }
        try await withServer(pki.serverConfiguration()) { group, server in
            for hostname in ["api.push.apple.com", "127.0.0.2"] {
                let client = try await Client(group: group, port: server.port, configuration: pki.clientConfiguration(hostname: hostname))
                let error = try await client.expectations.firstError.futureResult.get()
                guard case TLSError.handshakeFailed(let verification, _) = error else {
                    Issue.record("\(hostname): expected handshakeFailed, got \(error)")
                    continue
                }
                #expect(verification == "hostname mismatch" || verification == "IP address mismatch", "\(hostname): \(error)")
                try await client.channel.closeFuture.get()
            }
        }
    }

    @Test func serverNotSelectingH2IsAClearClientError() async throws {
        let pki = try TestPKI()
        defer { pki.removeFiles() }
        var serverConfiguration = pki.serverConfiguration()
        serverConfiguration.alpnProtocols = []
        try await withServer(serverConfiguration) { group, server in
            let client = try await Client(group: group, port: server.port, configuration: pki.clientConfiguration())
            let error = try await client.expectations.firstError.futureResult.get()
            #expect(error as? TLSError == .alpnNotNegotiated(offered: ["h2"], selected: nil))
            #expect("\(error)".contains("h2"))
            try await client.channel.closeFuture.get()
        }
    }

    @Test func closeNotifyEndsBothSidesWithoutError() async throws {
        let pki = try TestPKI()
        defer { pki.removeFiles() }
        try await withServer(pki.serverConfiguration()) { group, server in
            let client = try await Client(group: group, port: server.port, configuration: pki.clientConfiguration())
            _ = try await client.expectations.handshake.futureResult.get()
            _ = try await server.expectations.handshake.futureResult.get()
            try await client.channel.close()
            // The server sees close_notify, answers, closes: its recorder's channelInactive then
            // fails `firstError` with ClosedBeforeExpectation instead of receiving a TLS error.
            let serverOutcome = await Result { try await server.expectations.firstError.futureResult.get() }
            switch serverOutcome {
            case .success(let error):
                Issue.record("server saw an error on a clean close: \(error)")
            case .failure(let error):
                #expect(String(describing: type(of: error)) == "ClosedBeforeExpectation")
            }
        }
    }

    @Test func oneMegabyteRoundTripsByteExact() async throws {
        let pki = try TestPKI()
        defer { pki.removeFiles() }
        let size = 1 << 20
        var payload = ByteBuffer()
        var generator = SystemRandomNumberGenerator()
        payload.writeBytes((0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) })
        try await withServer(pki.serverConfiguration(), echo: true) { group, server in
            let client = try await Client(group: group, port: server.port, configuration: pki.clientConfiguration(), expectedBytes: size)
            _ = try await client.expectations.handshake.futureResult.get()
            // In slices of several sizes, flushed together, to exercise coalescing and direct writes.
            var remaining = payload
            var sliceSize = 1
            while remaining.readableBytes > 0 {
                let slice = remaining.readSlice(length: min(sliceSize, remaining.readableBytes))!
                client.channel.write(slice, promise: nil)
                sliceSize = sliceSize >= 65536 ? 1 : sliceSize * 3
            }
            try await client.channel.writeAndFlush(ByteBuffer())
            let echoed = try await client.expectations.received.futureResult.get()
            #expect(echoed.readableBytes == size)
            #expect(echoed == payload)
            try await client.channel.close()
        }
    }
}

extension Result where Failure == any Error {
    init(catching body: () async throws -> Success) async {
        do {
            self = .success(try await body())
        } catch {
            self = .failure(error)
        }
    }
}
