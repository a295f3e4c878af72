import NIOCore
import NIOEmbedded
import Testing

@testable import PushlineHTTP2
@testable import PushlineHTTP2Server

/// Client and server handlers talking through two EmbeddedChannels: no sockets, deterministic.
@Suite struct InMemoryTests {
    @Test func requestAndResponseCarryHeadersFlagsAndExactBodies() throws {
        let delegate = RecordingServerDelegate()
        let pair = try InMemoryPair(delegate: delegate)
        var payload = ByteBuffer()
        for index in 0..<200_000 { payload.writeInteger(UInt8(truncatingIfNeeded: index &* 31 &+ 7)) }
        let (streamID, future) = pair.submit(
            HTTP2Request(
                authority: "api.push.apple.com",
                path: "/3/device/0123",
                headers: [
                    HTTP2Header("Authorization", "bearer xyz", neverIndex: true),
                    HTTP2Header("apns-topic", "com.example.app"),
                    HTTP2Header("apns-push-type", "alert", neverIndex: true),
                ],
                body: payload
            )
        )
        #expect(streamID == 1)
        try pair.interact()

        let received = try #require(delegate.requests.first)
        #expect(received.method == "POST" && received.scheme == "https" && received.authority == "api.push.apple.com")
        #expect(received.path == "/3/device/0123" && received.pathNeverIndexed)
        #expect(
            received.headers == [
                HTTP2Header("authorization", "bearer xyz", neverIndex: true),
                HTTP2Header("apns-topic", "com.example.app", neverIndex: false),
                HTTP2Header("apns-push-type", "alert", neverIndex: true),
            ]
        )
        #expect(received.body == payload)

        let response = try #require(try future.completedResult()?.get())
        #expect(response.status == 200 && response.streamID == 1)
        #expect(response.headers.first(named: "x-path") == "/3/device/0123")
        #expect(response.headers.first { $0.name == "apns-id" }?.neverIndex == true)
        #expect(response.body == payload)
        #expect(pair.clientHandler.openStreams == 0)
        #expect(pair.serverHandler.openStreams == 0)
    }

    /// A header block longer than one frame (16 KiB) goes as HEADERS and CONTINUATION frames,
    /// and the requests around it are unchanged.
    @Test func aHeaderBlockLongerThanAFrameContinues() throws {
        let delegate = RecordingServerDelegate()
        let pair = try InMemoryPair(delegate: delegate)
        let long = String(repeating: "~|", count: 20_000)
        for value in ["short", long, "after"] {
            _ = pair.submit(
                HTTP2Request(authority: "localhost", path: "/\(value.count)", headers: [HTTP2Header("x-long", value, neverIndex: true)])
            )
        }
        try pair.interact()
        #expect(delegate.requests.map(\.path) == ["/5", "/40000", "/5"])
        #expect(delegate.requests.map { $0.headers.first(named: "x-long") } == ["short", long, "after"])
        #expect(pair.clientHandler.openStreams == 0)
    }

    /// The server shrinks its HPACK table (SETTINGS_HEADER_TABLE_SIZE): nghttp2 puts the size
    /// update ahead of the next block, the request encoder evicts as the server's decoder does,
    /// and `apns-id` (incrementally indexed first, then named by its dynamic index) decodes on
    /// every request before and after.
    @Test(arguments: [0, 100, 200])
    func requestsDecodeWhenTheServerShrinksItsHeaderTable(size: UInt32) throws {
        let delegate = RecordingServerDelegate()
        var server = HTTP2ServerConfiguration()
        server.headerTableSize = size
        let pair = try InMemoryPair(server: server, delegate: delegate)
        var ids: [String] = []
        for round in 0..<3 {
            for index in 0..<3 {
                let id = "00000000-0000-4000-8000-00000000000\(round * 3 + index)"
                ids.append(id)
                _ = pair.submit(
                    HTTP2Request(
                        authority: "localhost",
                        path: "/3/device/\(index)",
                        headers: [
                            HTTP2Header("apns-topic", "com.example.app", neverIndex: true),
                            HTTP2Header("apns-id", id, neverIndex: round + index > 0),
                        ]
                    )
                )
            }
            // The first round leaves before the server's SETTINGS arrive; the others after.
            try pair.interact()
        }
        #expect(delegate.requests.compactMap { $0.headers.first(named: "apns-id") } == ids)
        #expect(delegate.requests.map { $0.headers.first { $0.name == "apns-id" }?.neverIndex } == ids.indices.map { $0 > 0 })
        #expect(pair.clientHandler.openStreams == 0)
    }

    /// A tagged submit sends its body from where it lies: an array (larger than the server's
    /// stream window, so nghttp2 reads it in several calls, some only after a WINDOW_UPDATE), a
    /// buffer's readable bytes only, and an empty array as no body at all.
    @Test func taggedSubmitsSendArrayAndBufferBodiesExactly() throws {
        let delegate = RecordingServerDelegate()
        let clientDelegate = RecordingClientDelegate()
        var server = HTTP2ServerConfiguration()
        server.initialWindowSize = 20_000
        let pair = try InMemoryPair(server: server, delegate: delegate, clientDelegate: clientDelegate)
        let large = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        var buffer = ByteBuffer(string: "skipped{\"aps\":{}}")
        buffer.moveReaderIndex(forwardBy: 7)
        let bodies: [HTTP2RequestBody?] = [.bytes(large), .buffer(buffer), .bytes([]), nil]
        for (index, body) in bodies.enumerated() {
            _ = try pair.clientHandler.submit(tag: HTTP2StreamTag(id: UInt64(index)), body: body) { block in
                block.append(":method", "POST", neverIndex: false)
                block.append(":scheme", "https", neverIndex: false)
                block.append(":authority", "localhost", neverIndex: true)
                block.append(":path", "/\(index)", neverIndex: true)
            }
        }
        try pair.interact()

        let received = Dictionary(uniqueKeysWithValues: delegate.requests.map { ($0.path, $0.body) })
        #expect(received.count == 4)
        #expect(received["/0"] == ByteBuffer(bytes: large))
        #expect(received["/1"] == ByteBuffer(string: "{\"aps\":{}}"))
        #expect(received["/2"] == .some(nil) && received["/3"] == .some(nil))
        #expect(clientDelegate.completed.map(\.0.id).sorted() == [0, 1, 2, 3])
        for (tag, result) in clientDelegate.completed {
            let response = try result.get()
            #expect(response.status == 200 && response.body == received["/\(tag.id)"]!)
        }
        #expect(pair.clientHandler.openStreams == 0)
    }

    /// The handler reuses ended streams: a later request must see nothing of an earlier one's
    /// response (status, headers, body) or of its submitter.
    @Test func aReusedStreamStartsClean() throws {
        let delegate = RecordingServerDelegate()
        var answers = 0
        delegate.onRequest = { connection, request in
            answers += 1
            if answers == 1 {
                connection.respond(
                    to: request.streamID,
                    status: 410,
                    headers: [HTTP2Header("x-first", "only here"), HTTP2Header("apns-id", "first")],
                    body: request.body
                )
            } else {
                connection.respond(to: request.streamID, status: 200, headers: [HTTP2Header("apns-id", "second")], body: nil)
            }
        }
        let pair = try InMemoryPair(delegate: delegate)
        var body = ByteBuffer()
        body.writeString("{\"aps\":{}}")
        let first = pair.submit(HTTP2Request(authority: "a", path: "/1", body: body)).1
        try pair.interact()
        let firstResponse = try #require(try first.completedResult()?.get())
        #expect(firstResponse.status == 410 && firstResponse.body == body)
        let second = pair.submit(HTTP2Request(authority: "a", path: "/2")).1
        try pair.interact()
        let secondResponse = try #require(try second.completedResult()?.get())
        #expect(secondResponse.status == 200 && secondResponse.streamID == 3)
        #expect(secondResponse.headers.fields == [HTTP2Header("apns-id", "second")])
        #expect(secondResponse.body == nil)
        #expect(delegate.requests.last?.body == nil)
        // The first response is whole after the stream object went on to carry the second.
        #expect(firstResponse.headers.first(named: "x-first") == "only here" && firstResponse.body == body)
    }

    @Test func manySubmitsInOneTickBecomeOneWrite() throws {
        let delegate = RecordingServerDelegate()
        let pair = try InMemoryPair(delegate: delegate)
        try pair.interact()
        #expect(pair.clientHandler.peerMaxConcurrentStreams == 100)
        var futures: [EventLoopFuture<HTTP2Response>] = []
        for index in 0..<50 { futures.append(pair.submit(request(path: "/\(index)", body: "{}")).1) }
        pair.client.embeddedEventLoop.run()
        var writes = 0
        var buffered: [ByteBuffer] = []
        while let bytes = try pair.client.readOutbound(as: ByteBuffer.self) {
            writes += 1
            buffered.append(bytes)
        }
        #expect(writes == 1)
        for bytes in buffered { try pair.server.writeInbound(bytes) }
        try pair.interact()
        #expect(delegate.requests.count == 50)
        for future in futures { #expect(try future.completedResult()?.get().status == 200) }
    }

    @Test func refusedStreamIsReportedAsUnprocessed() throws {
        let delegate = RecordingServerDelegate()
        delegate.onRequest = { connection, request in connection.refuseStream(request.streamID) }
        let pair = try InMemoryPair(delegate: delegate)
        let (_, future) = pair.submit(request(body: "{}"))
        try pair.interact()
        #expect(throws: HTTP2StreamError(.refused, streamID: 1)) { try future.completedResult()?.get() }
        #expect(HTTP2StreamError(.refused, streamID: 1).isUnprocessed)
        #expect(pair.clientHandler.availableStreams == pair.clientHandler.peerMaxConcurrentStreams)
    }

    /// The client's polite close: one GOAWAY (NO_ERROR, last-stream-id 0), no stream after it,
    /// the open ones answered, then the client closes the connection itself.
    @Test func aClientGoAwayStopsNewStreamsLetsOpenOnesEndThenCloses() throws {
        let delegate = RecordingServerDelegate()
        delegate.holdResponses = true
        let pair = try InMemoryPair(delegate: delegate)
        let (first, firstAnswer) = pair.submit(request())
        let (second, secondAnswer) = pair.submit(request())
        try pair.interact()
        #expect(delegate.requests.count == 2)

        #expect(pair.clientHandler.goAway())
        #expect(!pair.clientHandler.goAway(), "one GOAWAY")
        #expect(!pair.clientHandler.isAcceptingStreams)
        #expect(pair.clientHandler.availableStreams == 0)
        // Refused at once, before the GOAWAY is even written.
        let (third, thirdAnswer) = pair.submit(request())
        #expect(third == nil)
        guard case .failure(let error as HTTP2StreamError)? = thirdAnswer.completedResult(), case .connectionUnavailable = error.kind
        else {
            Issue.record("a submit after goAway() must fail as connectionUnavailable: \(String(describing: thirdAnswer.completedResult()))")
            return
        }
        try pair.interact()
        #expect(delegate.goAwaysReceived.map(\.lastStreamID) == [0])
        #expect(delegate.goAwaysReceived.map(\.errorCode) == [.noError])
        #expect(delegate.requests.count == 2)
        #expect(pair.client.isActive, "two streams still open")

        pair.serverHandler.respond(to: try #require(first), status: 200)
        try pair.interact()
        #expect(pair.client.isActive, "one stream still open")
        pair.serverHandler.respond(to: try #require(second), status: 200)
        try pair.interact()
        #expect(try firstAnswer.completedResult()?.get().status == 200)
        #expect(try secondAnswer.completedResult()?.get().status == 200)
        #expect(!pair.client.isActive, "the client closed once its last stream ended")
        #expect(delegate.goAwaysReceived.count == 1)
    }

    @Test func goAwaySplitsAnsweredAndUnprocessedStreams() throws {
        let delegate = RecordingServerDelegate()
        delegate.holdResponses = true
        let clientDelegate = RecordingClientDelegate()
        let pair = try InMemoryPair(delegate: delegate, clientDelegate: clientDelegate)
        try pair.interact()
        let futures = (0..<6).map { pair.submit(request(path: "/\($0)")).1 }
        try pair.interact()
        #expect(delegate.requests.count == 6)
        pair.serverHandler.sendGoAway(lastStreamID: 5, errorCode: .noError, debugData: ByteBuffer(string: #"{"reason":"Shutdown"}"#))
        for request in delegate.requests { pair.serverHandler.respond(to: request.streamID, status: 200) }
        try pair.interact()

        #expect(clientDelegate.goAways.map(\.lastStreamID) == [5])
        #expect(clientDelegate.goAways.first?.debugText == #"{"reason":"Shutdown"}"#)
        #expect(pair.clientHandler.receivedGoAway?.lastStreamID == 5)
        for (index, future) in futures.enumerated() {
            let streamID = Int32(index * 2 + 1)
            let result = try #require(future.completedResult())
            if streamID <= 5 {
                #expect(try result.get().status == 200)
            } else {
                #expect(throws: HTTP2StreamError(.goAway(lastStreamID: 5, errorCode: .noError), streamID: streamID)) {
                    try result.get()
                }
            }
        }
        // After GOAWAY no new streams; with nothing in flight both sides close.
        let (_, late) = pair.submit(request())
        let lateError = try #require(late.completedResult().map { result in Result { try result.get() } })
        guard case .failure(let error as HTTP2StreamError) = lateError, case .connectionUnavailable = error.kind else {
            Issue.record("expected connectionUnavailable, got \(lateError)")
            return
        }
        #expect(error.isUnprocessed)
        #expect(!pair.client.isActive && !pair.server.isActive)
        #expect(clientDelegate.closed)
    }

    @Test func cancelResetsTheStreamAndFreesItsSlotAtOnce() throws {
        let delegate = RecordingServerDelegate()
        delegate.holdResponses = true
        let pair = try InMemoryPair(server: HTTP2ServerConfiguration(maxConcurrentStreams: 1), delegate: delegate)
        try pair.interact()
        let (streamID, future) = pair.submit(request())
        try pair.interact()
        #expect(pair.clientHandler.availableStreams == 0)
        #expect(pair.serverHandler.openStreams == 1)
        pair.clientHandler.cancel(streamID: try #require(streamID))
        #expect(pair.clientHandler.availableStreams == 1)
        #expect(throws: HTTP2StreamError(.cancelled, streamID: 1)) { try future.completedResult()?.get() }
        try pair.interact()
        #expect(pair.serverHandler.openStreams == 0)
        #expect(delegate.closedStreams.map(\.1) == [.cancel])
        #expect(pair.serverHandler.respond(to: 1, status: 200) == false)
    }

    @Test func serverRaisesItsLimitAfterTheFirstRequest() throws {
        let delegate = RecordingServerDelegate()
        delegate.onRequest = { connection, request in
            connection.respond(to: request.streamID, status: 200)
            if connection.advertisedMaxConcurrentStreams == 1 { connection.setMaxConcurrentStreams(500) }
        }
        let clientDelegate = RecordingClientDelegate()
        let pair = try InMemoryPair(
            server: HTTP2ServerConfiguration(maxConcurrentStreams: 1),
            delegate: delegate,
            clientDelegate: clientDelegate
        )
        let futures = (0..<20).map { pair.submit(request(path: "/\($0)")).1 }
        try pair.interact()
        #expect(clientDelegate.peerMaxValues == [1, 500])
        #expect(pair.clientHandler.peerMaxConcurrentStreams == 500)
        #expect(pair.serverHandler.stats.limitViolations == 0)
        for future in futures { #expect(try future.completedResult()?.get().status == 200) }
    }

    @Test func pingReportsRoundTripTime() throws {
        let pair = try InMemoryPair(delegate: RecordingServerDelegate())
        try pair.interact()
        let rtt = pair.clientHandler.ping()
        try pair.interact()
        let value = try #require(try rtt.completedResult()?.get())
        #expect(value >= .zero)
        let serverRTT = pair.serverHandler.ping()
        try pair.interact()
        #expect(try serverRTT.completedResult()?.get() != nil)
    }

    @Test func closingWithStreamsInFlightSaysTheyMayHaveBeenProcessed() throws {
        let delegate = RecordingServerDelegate()
        delegate.holdResponses = true
        let pair = try InMemoryPair(delegate: delegate)
        let (_, future) = pair.submit(request())
        try pair.interact()
        try pair.client.close().wait()
        #expect(throws: HTTP2StreamError(.connectionClosed, streamID: 1)) { try future.completedResult()?.get() }
        #expect(!HTTP2StreamError(.connectionClosed, streamID: 1).isUnprocessed)
    }
}
