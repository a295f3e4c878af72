import NIOCore
import NIOEmbedded
import Testing

@testable import PushlineHTTP2
@testable import PushlineHTTP2Server

/// The server keeps request headers as bytes and reuses its streams: what a delegate sees must not
/// change because of either.
@Suite struct ServerRequestBytesTests {
    @Test func headerFieldsKeepOrderRepeatsFlagsAndLowercaseNames() {
        var fields = HTTP2HeaderFields(capacity: 8)
        fields.append("Apns-Topic", "com.example.app")
        fields.append("apns-id", "x", neverIndex: true)
        fields.append("apns-id", "")
        #expect(fields.count == 3)
        #expect(
            fields.headers == [
                HTTP2Header("apns-topic", "com.example.app"),
                HTTP2Header("apns-id", "x", neverIndex: true),
                HTTP2Header("apns-id", ""),
            ]
        )
        #expect(fields.value(named: "apns-id") == "x")
        #expect(fields.value(named: "authorization") == nil)
        fields.removeAll()
        #expect(fields.count == 0 && fields.headers.isEmpty)
    }

    @Test func handMadeRequestsReadBackAsBuiltAndCanBeEdited() {
        var request = HTTP2ServerRequest(
            streamID: 3,
            method: "POST",
            scheme: "https",
            authority: "a",
            path: "/3/device/ab",
            headers: [HTTP2Header("X-Mixed", "1", neverIndex: true)],
            pathNeverIndexed: true
        )
        #expect(request.method == "POST" && request.scheme == "https" && request.authority == "a")
        #expect(request.path == "/3/device/ab" && request.pathNeverIndexed)
        #expect(request.headers == [HTTP2Header("X-Mixed", "1", neverIndex: true)], "names kept verbatim")
        request.path = "/3/device/cd"
        request.headers.append(HTTP2Header("apns-id", "y"))
        #expect(request.path == "/3/device/cd" && request.method == "POST")
        #expect(request.headers.map(\.name) == ["X-Mixed", "apns-id"])
        #expect(request.withHeaderValue(named: "apns-id") { String(decoding: $0, as: UTF8.self) } == "y")
        var pseudo: [String] = []
        request.withUnsafeFields { fields in
            fields.forEach { name, _, _ in
                if name.first == UInt8(ascii: ":") { pseudo.append(String(decoding: name, as: UTF8.self)) }
            }
        }
        #expect(pseudo == [":method", ":scheme", ":authority", ":path"])
    }

    @Test func requestsHeldByTheDelegateSurviveStreamReuse() throws {
        let delegate = RecordingServerDelegate()
        delegate.holdResponses = true
        let pair = try InMemoryPair(delegate: delegate)
        try pair.interact()
        // Rounds of requests answered and closed, so later rounds run on reused streams while the
        // delegate still holds every earlier request.
        for round in 0..<4 {
            let futures = (0..<20).map { index in
                pair.submit(
                    request(
                        path: "/\(round)/\(index)",
                        body: "body \(round) \(index)",
                        headers: [HTTP2Header("x-index", "\(round)-\(index)")]
                    )
                ).1
            }
            try pair.interact()
            for request in delegate.requests.suffix(20) {
                var fields = HTTP2HeaderFields()
                fields.append("x-echo", request.headers.first(named: "x-index") ?? "", neverIndex: true)
                pair.serverHandler.respond(to: request.streamID, status: 200, fields: fields, body: request.body)
            }
            try pair.interact()
            for (index, future) in futures.enumerated() {
                let response = try #require(try future.completedResult()?.get())
                #expect(response.headers.first(named: "x-echo") == "\(round)-\(index)")
                #expect(response.headers.first { $0.name == "x-echo" }?.neverIndex == true)
                #expect(response.body.map { String(buffer: $0) } == "body \(round) \(index)")
            }
        }
        #expect(delegate.requests.count == 80)
        for (offset, request) in delegate.requests.enumerated() {
            let (round, index) = offset.quotientAndRemainder(dividingBy: 20)
            #expect(request.path == "/\(round)/\(index)")
            #expect(request.headers.first(named: "x-index") == "\(round)-\(index)")
            #expect(request.body.map { String(buffer: $0) } == "body \(round) \(index)")
        }
    }

    @Test func aDelegateClosingMidBatchGetsEveryRequestOnceThenClosed() throws {
        final class ClosingDelegate: HTTP2ServerDelegate {
            var events: [String] = []
            func http2Server(_ connection: HTTP2ServerHandler, didReceive request: HTTP2ServerRequest) {
                events.append(request.path)
                if request.path == "/2" { connection.closeAbruptly() }
            }
            func http2ServerClosed(_ connection: HTTP2ServerHandler) { events.append("closed") }
        }
        let delegate = ClosingDelegate()
        let pair = try InMemoryPair(delegate: delegate)
        try pair.interact()
        for index in 0..<5 { _ = pair.submit(request(path: "/\(index)", body: "{}")) }
        pair.client.embeddedEventLoop.run()
        var bytes = ByteBuffer()
        while var chunk = try pair.client.readOutbound(as: ByteBuffer.self) { bytes.writeBuffer(&chunk) }
        // One read: all five requests are queued before the delegate sees the first.
        try pair.server.writeInbound(bytes)
        #expect(delegate.events == ["/0", "/1", "/2", "/3", "/4", "closed"])
    }
}
