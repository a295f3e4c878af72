import Foundation
import NIOCore
import NIOPosix
import PushlineHTTP2
import PushlineHTTP2Server
import PushlineTLS
import PushlineTestCA
import Synchronization

/// Our HTTP/2 client against our HTTP/2 server, over our TLS, on loopback.
enum TransportBenchmark {
    final class OK: HTTP2ServerDelegate {
        func http2Server(_ connection: HTTP2ServerHandler, didReceive request: HTTP2ServerRequest) {
            _ = connection.respond(
                to: request.streamID,
                status: 200,
                headers: [HTTP2Header("apns-id", "00000000-0000-4000-8000-000000000000")]
            )
        }
    }

    struct Server {
        var channel: any Channel
        var group: MultiThreadedEventLoopGroup
        var caFile: String
        var port: Int { channel.localAddress!.port! }
    }

    static func startServer(threads: Int = 1) async throws -> Server {
        let authority = try CertificateAuthority.create()
        let identity = try authority.issueServerCertificate(dnsNames: ["localhost"], ipAddresses: ["127.0.0.1"])
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pushline-bench-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let caFile = directory.appendingPathComponent("ca.pem").path
        try (try authority.certificate.pem()).write(toFile: caFile, atomically: true, encoding: .utf8)
        let context = try TLSContext(configuration: .server(identity: .certifiedKey(identity)))
        let group = MultiThreadedEventLoopGroup(numberOfThreads: threads)
        let channel = try await ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandlers([
                        TLSHandler(context: context),
                        HTTP2ServerHandler(configuration: HTTP2ServerConfiguration(maxConcurrentStreams: 1000), delegate: OK()),
                    ])
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        return Server(channel: channel, group: group, caFile: caFile)
    }

    static func serve(seconds: Int) async throws {
        let server = try await startServer(threads: 1)
        FileHandle.standardOutput.write(Data("port \(server.port)\n".utf8))
        try await Task.sleep(for: .seconds(seconds))
        try await server.channel.close()
        try await server.group.shutdownGracefully()
    }

    /// Keeps `streams` requests in flight on each connection for `seconds`; returns JSON.
    static func run(connections: Int, streams: Int, seconds: Int) async throws -> String {
        let server = try await startServer(threads: 1)
        let clientGroup = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let context = try TLSContext(configuration: .client(serverHostname: "127.0.0.1", trustRoots: .caFile(server.caFile)))
        let completed = Atomic<Int>(0)
        let stop = Atomic<Bool>(false)
        var channels: [any Channel] = []
        for _ in 0..<connections {
            let channel = try await ClientBootstrap(group: clientGroup)
                .channelOption(.socketOption(.tcp_nodelay), value: 1)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandlers([TLSHandler(context: context), HTTP2ClientHandler()])
                    }
                }
                .connect(host: "127.0.0.1", port: server.port).get()
            channels.append(channel)
        }
        let body = ByteBuffer(string: #"{"aps":{"alert":{"title":"Sale","body":"50% off today"},"sound":"default"}}"#)
        let started = ContinuousClock.now
        for channel in channels {
            try await channel.eventLoop.submit {
                let handler = try channel.pipeline.syncOperations.handler(type: HTTP2ClientHandler.self)
                let loop = channel.eventLoop
                func fire() {
                    guard !stop.load(ordering: .relaxed) else { return }
                    let request = HTTP2Request(
                        authority: "127.0.0.1",
                        path: "/3/device/0123456789abcdef",
                        headers: [HTTP2Header("apns-topic", "com.example.app", neverIndex: true)],
                        body: body
                    )
                    let promise = loop.makePromise(of: HTTP2Response.self)
                    promise.futureResult.assumeIsolated().whenComplete { _ in
                        completed.wrappingAdd(1, ordering: .relaxed)
                        fire()
                    }
                    handler.submit(request, promise: promise)
                }
                for _ in 0..<streams { fire() }
            }.get()
        }
        try await Task.sleep(for: .seconds(seconds))
        stop.store(true, ordering: .relaxed)
        let elapsed = ContinuousClock.now - started
        let count = completed.load(ordering: .relaxed)
        let secondsElapsed = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        for channel in channels { try? await channel.close() }
        try await clientGroup.shutdownGracefully()
        try await server.channel.close()
        try await server.group.shutdownGracefully()
        let rate = Double(count) / secondsElapsed
        return
            #"{"benchmark":"transport","connections":\#(connections),"streams":\#(streams),"requests":\#(count),"seconds":\#(String(format: "%.2f", secondsElapsed)),"requests_per_second":\#(Int(rate))}"#
    }
}
