import NIOCore
import NIOEmbedded
import PushlineTLS
import Testing

/// Client and server TLSHandlers on two EmbeddedChannels, bytes shuttled by hand
/// (like swift-nio-ssl's `interactInMemory`): deterministic, no sockets.
@Suite struct InMemoryTLSTests {
    final class Pair {
        let client = EmbeddedChannel()
        let server = EmbeddedChannel()
        let clientRecorder: RecordingHandler
        let serverRecorder: RecordingHandler
        let clientHandler: TLSHandler
        let serverHandler: TLSHandler

        init(client clientConfiguration: TLSConfiguration, server serverConfiguration: TLSConfiguration) throws {
            clientHandler = try TLSHandler(context: TLSContext(configuration: clientConfiguration))
            serverHandler = try TLSHandler(context: TLSContext(configuration: serverConfiguration))
            clientRecorder = RecordingHandler(expectations: .init(eventLoop: client.eventLoop))
            serverRecorder = RecordingHandler(expectations: .init(eventLoop: server.eventLoop))
            try client.pipeline.syncOperations.addHandlers([clientHandler, clientRecorder])
            try server.pipeline.syncOperations.addHandlers([serverHandler, serverRecorder])
        }

        func connect() throws {
            let address = try SocketAddress(ipAddress: "127.0.0.1", port: 443)
            try server.connect(to: address).wait()
            try client.connect(to: address).wait()
        }

        /// Moves ciphertext both ways until neither side has anything to send.
        /// Returns how many buffers went client -> server.
        @discardableResult
        func interact() throws -> Int {
            var clientWrites = 0
            var progress = true
            while progress {
                progress = false
                while let bytes = try client.readOutbound(as: ByteBuffer.self) {
                    progress = true
                    clientWrites += 1
                    if server.isActive { try server.writeInbound(bytes) }
                }
                while let bytes = try server.readOutbound(as: ByteBuffer.self) {
                    progress = true
                    if client.isActive { try client.writeInbound(bytes) }
                }
            }
            return clientWrites
        }
    }

    @Test func handshakeAndDataBothWays() throws {
        let pki = try TestPKI()
        defer { pki.removeFiles() }
        let pair = try Pair(client: pki.clientConfiguration(), server: pki.serverConfiguration())
        try pair.connect()
        // Written before the handshake, like the HTTP/2 preface: buffered, then sent.
        let prefaceWritten = pair.client.writeAndFlush(ByteBuffer(string: "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"))
        let clientHello = try #require(try pair.client.readOutbound(as: ByteBuffer.self))
        #expect(try pair.client.readOutbound(as: ByteBuffer.self) == nil, "the preface waits for the handshake")
        try pair.server.writeInbound(clientHello)
        try pair.interact()
        try prefaceWritten.wait()

        #expect(pair.clientRecorder.events == [.handshakeCompleted(negotiatedProtocol: "h2")])
        #expect(pair.serverRecorder.events == [.handshakeCompleted(negotiatedProtocol: "h2")])
        #expect(pair.clientHandler.peerCertificate?.subject.commonName == "localhost")
        #expect(pair.serverHandler.peerCertificate == nil)
        #expect(pair.serverRecorder.receivedBytes == ByteBuffer(string: "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"))

        try pair.server.writeAndFlush(ByteBuffer(string: "response")).wait()
        try pair.interact()
        #expect(pair.clientRecorder.receivedBytes == ByteBuffer(string: "response"))
        #expect(pair.clientRecorder.errors.isEmpty)
        #expect(pair.serverRecorder.errors.isEmpty)
    }

    @Test func writesBetweenFlushesLeaveAsOneSocketWrite() throws {
        let pki = try TestPKI()
        defer { pki.removeFiles() }
        let pair = try Pair(client: pki.clientConfiguration(), server: pki.serverConfiguration())
        try pair.connect()
        try pair.interact()

        var promises: [EventLoopFuture<Void>] = []
        for index in 0..<2000 {
            promises.append(pair.client.write(ByteBuffer(string: String(format: "request %05d;", index))))
        }
        #expect(try pair.client.readOutbound(as: ByteBuffer.self) == nil, "nothing may leave before the flush")
        pair.client.flush()
        let writes = try pair.interact()
        #expect(writes == 1)
        for promise in promises { try promise.wait() }
        let expected = (0..<2000).map { String(format: "request %05d;", $0) }.joined()
        #expect(pair.serverRecorder.receivedBytes == ByteBuffer(string: expected))
        // ~30 KB of plaintext in ~16 KiB records arrives in very few reads.
        #expect(pair.serverRecorder.readCount <= 3)
    }

    @Test func clientCertificateSubjectIsExposedToTheServer() throws {
        let pki = try TestPKI()
        defer { pki.removeFiles() }
        let identity = TLSConfiguration.Identity.pemFiles(
            certificateChain: pki.clientCertificateFile,
            privateKey: pki.clientKeyFile,
            password: nil
        )
        let pair = try Pair(
            client: pki.clientConfiguration(identity: identity),
            server: pki.serverConfiguration(requireClientCertificate: true)
        )
        try pair.connect()
        try pair.interact()
        let subject = try #require(pair.serverHandler.peerCertificate?.subject)
        #expect(subject.userID == "com.example.app")
        #expect(subject.commonName == "Apple Push Services: com.example.app")
        #expect(pair.serverRecorder.errors.isEmpty)
    }

    @Test func closeNotifyClosesBothSidesCleanly() throws {
        let pki = try TestPKI()
        defer { pki.removeFiles() }
        let pair = try Pair(client: pki.clientConfiguration(), server: pki.serverConfiguration())
        try pair.connect()
        try pair.interact()
        pair.client.write(ByteBuffer(string: "last words"), promise: nil)
        let closed = pair.client.close()
        try pair.interact()
        try closed.wait()
        #expect(!pair.client.isActive)
        #expect(!pair.server.isActive, "the server answers close_notify by closing")
        #expect(pair.serverRecorder.receivedBytes == ByteBuffer(string: "last words"))
        #expect(pair.clientRecorder.errors.isEmpty)
        #expect(pair.serverRecorder.errors.isEmpty, "\(pair.serverRecorder.errors)")
    }

    @Test func eofWithoutCloseNotifyIsReported() throws {
        let pki = try TestPKI()
        defer { pki.removeFiles() }
        let pair = try Pair(client: pki.clientConfiguration(), server: pki.serverConfiguration())
        try pair.connect()
        try pair.interact()
        pair.server.pipeline.fireChannelInactive()
        #expect(pair.serverRecorder.errors.contains { ($0 as? TLSError) == .uncleanShutdown })
    }
}
