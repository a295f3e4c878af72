import NIOCore
import NIOEmbedded

@testable import PushlineHTTP2
@testable import PushlineHTTP2Server

/// A client and a server handler on two EmbeddedChannels, with bytes shuttled between them
/// until both sides are quiet.
final class InMemoryPair {
    let client: EmbeddedChannel
    let server: EmbeddedChannel
    let clientHandler: HTTP2ClientHandler
    let serverHandler: HTTP2ServerHandler

    init(
        server serverConfiguration: HTTP2ServerConfiguration = .init(),
        client clientConfiguration: HTTP2ClientConfiguration = .init(),
        delegate: any HTTP2ServerDelegate,
        clientDelegate: (any HTTP2ClientDelegate)? = nil
    ) throws {
        clientHandler = HTTP2ClientHandler(configuration: clientConfiguration, delegate: clientDelegate)
        serverHandler = HTTP2ServerHandler(configuration: serverConfiguration, delegate: delegate)
        client = EmbeddedChannel(handler: clientHandler)
        server = EmbeddedChannel(handler: serverHandler)
        let address = try SocketAddress(ipAddress: "127.0.0.1", port: 1)
        try server.connect(to: address).wait()
        try client.connect(to: address).wait()
    }

    /// Runs both event loops and moves bytes both ways until nothing moves; `eachStep` runs
    /// after every write of one side's bytes into the other (to check what must hold throughout).
    func interact(eachStep: () throws -> Void = {}) throws {
        var moved = true
        while moved {
            moved = false
            client.embeddedEventLoop.run()
            server.embeddedEventLoop.run()
            while let bytes = try client.readOutbound(as: ByteBuffer.self) {
                try server.writeInbound(bytes)
                try eachStep()
                moved = true
            }
            while let bytes = try server.readOutbound(as: ByteBuffer.self) {
                try client.writeInbound(bytes)
                try eachStep()
                moved = true
            }
        }
    }

    func submit(_ request: HTTP2Request) -> (Int32?, EventLoopFuture<HTTP2Response>) {
        let promise = client.eventLoop.makePromise(of: HTTP2Response.self)
        let streamID = clientHandler.submit(request, promise: promise)
        return (streamID, promise.futureResult)
    }

    /// Submits a request the way the APNs pool does (a tag, the header block written in place):
    /// its outcome reaches the client delegate as `completed <id>`.
    @discardableResult
    func submitTagged(_ id: UInt64, path: String = "/3/device/abc") throws(HTTP2StreamError) -> Int32 {
        try clientHandler.submit(tag: HTTP2StreamTag(id: id), body: nil) { block in
            block.append(":method", "POST", neverIndex: false)
            block.append(":scheme", "https", neverIndex: false)
            block.append(":authority", "localhost", neverIndex: false)
            block.append(":path", path, neverIndex: true)
        }
    }
}

/// Records requests; answers each at once (echoing path and body) unless `holdResponses`.
final class RecordingServerDelegate: HTTP2ServerDelegate {
    var requests: [HTTP2ServerRequest] = []
    var holdResponses = false
    var closedStreams: [(Int32, HTTP2ErrorCode)] = []
    var goAwaysReceived: [HTTP2GoAway] = []
    var onRequest: ((HTTP2ServerHandler, HTTP2ServerRequest) -> Void)?

    func http2Server(_ connection: HTTP2ServerHandler, didReceive request: HTTP2ServerRequest) {
        requests.append(request)
        if let onRequest {
            onRequest(connection, request)
        } else if !holdResponses {
            connection.respond(
                to: request.streamID,
                status: 200,
                headers: [HTTP2Header("x-path", request.path), HTTP2Header("apns-id", "abc", neverIndex: true)],
                body: request.body
            )
        }
    }

    func http2Server(_ connection: HTTP2ServerHandler, streamClosed streamID: Int32, errorCode: HTTP2ErrorCode) {
        closedStreams.append((streamID, errorCode))
    }

    func http2Server(_ connection: HTTP2ServerHandler, goAwayReceived goAway: HTTP2GoAway) {
        goAwaysReceived.append(goAway)
    }
}

/// Records client connection events, and all of them in order in `log`.
final class RecordingClientDelegate: HTTP2ClientDelegate {
    var peerMaxValues: [Int] = []
    var goAways: [HTTP2GoAway] = []
    var completed: [(HTTP2StreamTag, Result<HTTP2Response, HTTP2StreamError>)] = []
    var closed = false
    /// Every event by name ("peerMax 100", "completed 3", "streamsFinished", "goAwayReceived",
    /// "goAwaySent", "closed"), in the order the handler delivered them.
    var log: [String] = []

    func http2Client(_ client: HTTP2ClientHandler, peerMaxConcurrentStreamsChanged value: Int) {
        peerMaxValues.append(value)
        log.append("peerMax \(value)")
    }

    func http2Client(_ client: HTTP2ClientHandler, goAwayReceived goAway: HTTP2GoAway) {
        goAways.append(goAway)
        log.append("goAwayReceived")
    }

    func http2Client(_ client: HTTP2ClientHandler, goAwaySent goAway: HTTP2GoAway) {
        log.append("goAwaySent")
    }

    func http2Client(_ client: HTTP2ClientHandler, completed tag: HTTP2StreamTag, result: Result<HTTP2Response, HTTP2StreamError>) {
        completed.append((tag, result))
        log.append("completed \(tag.id)")
    }

    func http2ClientStreamsFinished(_ client: HTTP2ClientHandler) {
        log.append("streamsFinished")
    }

    func http2ClientClosed(_ client: HTTP2ClientHandler) {
        closed = true
        log.append("closed")
    }

    /// The outcome of the tagged stream `id`.
    func result(_ id: UInt64) -> Result<HTTP2Response, HTTP2StreamError>? {
        completed.first { $0.0.id == id }?.1
    }
}

extension EventLoopFuture {
    /// The result of an already-completed future (EmbeddedEventLoop futures after `interact`).
    func completedResult() -> Result<Value, any Error>? {
        var result: Result<Value, any Error>?
        assumeIsolated().whenComplete { result = $0 }
        return result
    }
}

func request(path: String = "/3/device/abc", body: String? = nil, headers: [HTTP2Header] = []) -> HTTP2Request {
    HTTP2Request(authority: "localhost", path: path, headers: headers, body: body.map { ByteBuffer(string: $0) })
}
