import CNGHTTP2
import NIOCore

/// Owns one `nghttp2_session` in memory mode (no sockets: bytes in through `receive`, bytes out
/// through `send`). Callbacks reach `events` through `Unmanaged` user data pointing at this object.
///
/// Confined to one EventLoop by its owning handler; not Sendable. `package`: the server handler
/// (PushlineHTTP2Server) drives the same session type.
package final class NGHTTP2Session {
    package enum Role { case client, server }

    /// The nghttp2 session; created in init, freed in deinit, never handed out.
    private let raw: OpaquePointer
    package let role: Role
    // `@exclusivity(unchecked)`: confined to one event loop and never accessed re-entrantly (the
    // nghttp2 callbacks run inside our calls into the session, but touch no property those calls
    // hold open); without the HTTP/2 client's, the worker's CPU per notification was ×1.085 at 100
    // tokens per job, and ×1.100 without them all (docs/architecture.md, "Unsafe constructs on the hot path").
    @exclusivity(unchecked) private var headerBlock = HTTP2HeaderBlock()
    /// Writes the client's request header blocks (`HTTP2RequestHeadersFrame`).
    @exclusivity(unchecked) private var encoder = HPACKRequestEncoder()
    /// The last flush's buffer, for the next one (`flushOutput`).
    @exclusivity(unchecked) private var output: ByteBuffer?
    /// How many bytes the last flush wrote: a new buffer starts that large, so a burst does not
    /// grow it by doubling (each growth a copy).
    @exclusivity(unchecked) private var lastFlushBytes = 0
    /// Client sessions allocate from this pool (see `NGHTTP2MemoryPool`); released after the
    /// session is deleted in deinit, so it outlives every allocation nghttp2 frees.
    private let memoryPool: NGHTTP2MemoryPool?

    /// The handler that owns this session. `unowned(unsafe)`: the handler holds the only strong
    /// reference to the session, so the handler outlives every callback the session can make.
    @exclusivity(unchecked) unowned(unsafe) package var events: (any NGHTTP2SessionEvents)?
    /// For callbacks a handler installs itself (`installCallbacks` in init; the client's and the
    /// server's per-request callbacks, through `withSessionOwner`): that handler, unretained
    /// (`Unmanaged.passUnretained(handler).toOpaque()`), so they reach it without reference
    /// counting or an existential. Valid for the same reason as `events`: the handler owns the
    /// session.
    @exclusivity(unchecked) package var owner: UnsafeMutableRawPointer?

    /// - Parameters:
    ///   - peerMaxConcurrentStreams: what to assume for the peer's SETTINGS_MAX_CONCURRENT_STREAMS
    ///     until its first SETTINGS arrives.
    ///   - installCallbacks: sets the role's own callbacks after the shared ones (the client's or
    ///     the server's per-request callbacks, which reach `owner`): headers, DATA, frames
    ///     received, streams closed.
    ///   - resetRateLimit: server only: the token bucket nghttp2 (1.52 with Debian's CVE-2023-44487
    ///     backport, 1.57+ upstream) puts on received RST_STREAM frames; when it runs dry, nghttp2
    ///     sends GOAWAY INTERNAL_ERROR. nil = nghttp2's own default (burst 1000, 33 per second).
    package init(
        role: Role,
        peerMaxConcurrentStreams: UInt32,
        resetRateLimit: (burst: UInt64, perSecond: UInt64)? = nil,
        installCallbacks: (OpaquePointer?) -> Void
    ) throws {
        self.role = role
        var callbacks: OpaquePointer?
        try Self.check("nghttp2_session_callbacks_new", nghttp2_session_callbacks_new(&callbacks))
        // The session copies the callbacks table; we free ours right after creating it.
        defer { nghttp2_session_callbacks_del(callbacks) }
        installNGHTTP2Callbacks(callbacks)
        installCallbacks(callbacks)

        var option: OpaquePointer?
        try Self.check("nghttp2_option_new", nghttp2_option_new(&option))
        defer { nghttp2_option_del(option) }
        nghttp2_option_set_peer_max_concurrent_streams(option, peerMaxConcurrentStreams)
        // We never use RFC 7540 priorities, so closed streams need not be kept for the tree.
        nghttp2_option_set_no_closed_streams(option, 1)
        if let resetRateLimit, role == .server {
            nghttp2_option_set_stream_reset_rate_limit(option, resetRateLimit.burst, resetRateLimit.perSecond)
        }

        var session: OpaquePointer?
        let pool = role == .client ? NGHTTP2MemoryPool() : nil
        memoryPool = pool
        switch role {
        case .client:
            var mem = pool!.mem
            // nghttp2 copies the nghttp2_mem struct; the pool itself must outlive the session.
            try Self.check("nghttp2_session_client_new3", nghttp2_session_client_new3(&session, callbacks, nil, option, &mem))
        case .server: try Self.check("nghttp2_session_server_new2", nghttp2_session_server_new2(&session, callbacks, nil, option))
        }
        raw = session!
        // User data is set after init because it is `self`; no callback runs before the first receive/send.
        nghttp2_session_set_user_data(raw, Unmanaged.passUnretained(self).toOpaque())
    }

    deinit { nghttp2_session_del(raw) }

    private static func check(_ operation: String, _ rv: Int32) throws {
        if rv != 0 { throw NGHTTP2Error(operation, code: rv) }
    }

    // MARK: Bytes in and out

    /// Feeds received bytes to nghttp2; callbacks run synchronously inside.
    package func receive(_ buffer: ByteBuffer) throws {
        let rv = buffer.withUnsafeReadableBytes { bytes -> Int in
            guard let base = bytes.baseAddress else { return 0 }
            return nghttp2_session_mem_recv(raw, base.assumingMemoryBound(to: UInt8.self), bytes.count)
        }
        if rv < 0 { throw NGHTTP2Error("nghttp2_session_mem_recv", code: Int32(truncatingIfNeeded: rv)) }
    }

    /// Appends everything nghttp2 has to send to `buffer`; returns the number of bytes appended.
    /// A client's request HEADERS frames are written here from their fields
    /// (`HTTP2RequestHeadersFrame.write`).
    func send(into buffer: inout ByteBuffer) throws -> Int {
        let start = buffer.writerIndex
        while true {
            var data: UnsafePointer<UInt8>?
            // The returned bytes stay valid only until the next nghttp2 call: copy them now.
            let count = nghttp2_session_mem_send(raw, &data)
            if count < 0 { throw NGHTTP2Error("nghttp2_session_mem_send", code: Int32(truncatingIfNeeded: count)) }
            if count == 0 { return buffer.writerIndex - start }
            let frame = UnsafeRawBufferPointer(start: data, count: count)
            // mem_send hands out one frame's buffer per call; a client sends HEADERS only to
            // open a request's stream.
            if role == .client, count >= HTTP2RequestHeadersFrame.headerCount, frame[3] == HTTP2RequestHeadersFrame.headersType {
                try HTTP2RequestHeadersFrame.write(replacing: frame, fields: &headerBlock, encoder: &encoder, into: &buffer)
            } else {
                buffer.writeBytes(frame)
            }
        }
    }

    /// Writes everything nghttp2 has to send to `context` as one buffer with one flush (the write
    /// coalescing both handlers rely on). Returns false once the session wants neither to read
    /// nor to write: GOAWAY exchanged and nothing in flight, so the connection is done.
    ///
    /// The buffer is kept for the next flush: the TLS handler encrypts what it is given before
    /// `writeAndFlush` returns, so by then the buffer is this session's alone again and is
    /// reused without an allocation (when something else still holds it, `clear` allocates, as
    /// a new buffer would). A new buffer starts as large as the last flush: at 1,000 streams a
    /// connection's flushes run to 50-100 KiB, and growing a 16 KiB buffer by doubling copied
    /// them two or three times (0.5% of the worker at 1 token per job). One that grew past
    /// 256 KiB in a burst is let go.
    package func flushOutput(to context: ChannelHandlerContext) throws -> Bool {
        let capacity = min(max(Self.outputCapacity, lastFlushBytes), Self.retainedOutputCapacity)
        var out = output.take() ?? context.channel.allocator.buffer(capacity: capacity)
        out.clear(minimumCapacity: capacity)
        let written = try send(into: &out)
        if written > 0 {
            context.writeAndFlush(NIOAny(out), promise: nil)
        }
        lastFlushBytes = written
        if out.capacity <= Self.retainedOutputCapacity { output = out }
        return wantsRead || wantsWrite
    }

    private static let outputCapacity = 16 * 1024
    private static let retainedOutputCapacity = 256 * 1024

    var wantsRead: Bool { nghttp2_session_want_read(raw) != 0 }
    var wantsWrite: Bool { nghttp2_session_want_write(raw) != 0 }

    // MARK: Submitting frames (queued; they leave on the next `send`)

    package func submitSettings(_ entries: [(id: nghttp2_settings_id, value: UInt32)]) throws {
        var iv = entries.map { nghttp2_settings_entry(settings_id: Int32($0.id.rawValue), value: $0.value) }
        let rv = iv.withUnsafeMutableBufferPointer {
            nghttp2_submit_settings(raw, UInt8(NGHTTP2_FLAG_NONE.rawValue), $0.baseAddress, $0.count)
        }
        try Self.check("nghttp2_submit_settings", rv)
    }

    /// Grows the connection-level receive window (stream windows come from SETTINGS).
    package func setConnectionWindow(_ size: Int32) throws {
        try Self.check(
            "nghttp2_session_set_local_window_size",
            nghttp2_session_set_local_window_size(raw, UInt8(NGHTTP2_FLAG_NONE.rawValue), 0, size)
        )
    }

    /// Queues a request; returns its stream id (or a negative nghttp2 error code).
    func submitRequest(_ request: HTTP2Request, hasBody: Bool) -> Int32 {
        submitRequest(hasBody: hasBody) { block in
            block.append(":method", request.method, neverIndex: false)
            block.append(":scheme", request.scheme, neverIndex: false)
            block.append(":authority", request.authority, neverIndex: !request.indexAuthority)
            block.append(":path", request.path, valueSuffix: request.pathSuffix, neverIndex: !request.indexPath)
            for header in request.headers {
                block.append(header.name, header.value, neverIndex: header.neverIndex)
            }
        }
    }

    /// Queues a request whose header fields `writeHeaders` writes (pseudo-headers first) into the
    /// session's block; returns its stream id (or a negative nghttp2 error code).
    ///
    /// nghttp2 gets a stand-in block (`:method: POST`, which it codes as one static index and
    /// never adds to its table); `send` writes the real block in its place when the frame leaves.
    func submitRequest(hasBody: Bool, writeHeaders: (inout HTTP2HeaderBlock) -> Void) -> Int32 {
        headerBlock.beginRequest()
        writeHeaders(&headerBlock)
        var provider = nghttp2_data_provider(source: nghttp2_data_source(ptr: nil), read_callback: clientReadBodyCallback)
        let streamID = HTTP2RequestHeadersFrame.withStandIn { standIn in
            // nghttp2 keeps the stand-in's pointers (static strings) and copies the provider; no
            // priority spec (no PRIORITY).
            hasBody
                ? nghttp2_submit_request(raw, nil, standIn, 1, &provider, nil)
                : nghttp2_submit_request(raw, nil, standIn, 1, nil, nil)
        }
        if streamID > 0 {
            headerBlock.commitRequest(streamID: streamID)
        } else {
            headerBlock.abandonRequest()
        }
        return streamID
    }

    /// Server only: a response whose header block the server built (`:status` first). nghttp2
    /// copies the nv pairs before returning; the body is read through `events.sessionReadBody`.
    package func submitResponse(streamID: Int32, nv: UnsafePointer<nghttp2_nv>, count: Int, hasBody: Bool) throws {
        var provider = nghttp2_data_provider(source: nghttp2_data_source(ptr: nil), read_callback: readBodyCallback)
        let rv =
            hasBody
            ? nghttp2_submit_response(raw, streamID, nv, count, &provider)
            : nghttp2_submit_response(raw, streamID, nv, count, nil)
        try Self.check("nghttp2_submit_response", rv)
    }

    package func submitReset(streamID: Int32, errorCode: HTTP2ErrorCode) throws {
        try Self.check(
            "nghttp2_submit_rst_stream",
            nghttp2_submit_rst_stream(raw, UInt8(NGHTTP2_FLAG_NONE.rawValue), streamID, errorCode.rawValue)
        )
    }

    package func submitGoAway(lastStreamID: Int32, errorCode: HTTP2ErrorCode, debugData: ByteBuffer) throws {
        let rv = debugData.withUnsafeReadableBytes { bytes in
            nghttp2_submit_goaway(
                raw,
                UInt8(NGHTTP2_FLAG_NONE.rawValue),
                lastStreamID,
                errorCode.rawValue,
                bytes.baseAddress?.assumingMemoryBound(to: UInt8.self),
                bytes.count
            )
        }
        try Self.check("nghttp2_submit_goaway", rv)
    }

    package func submitPing(opaque: UInt64) throws {
        let rv = withUnsafeBytes(of: opaque.bigEndian) { bytes in
            nghttp2_submit_ping(raw, UInt8(NGHTTP2_FLAG_NONE.rawValue), bytes.baseAddress?.assumingMemoryBound(to: UInt8.self))
        }
        try Self.check("nghttp2_submit_ping", rv)
    }

    // MARK: Queries

    /// The peer's SETTINGS_MAX_CONCURRENT_STREAMS (the assumed value until its SETTINGS arrive).
    var remoteMaxConcurrentStreams: UInt32 {
        nghttp2_session_get_remote_settings(raw, NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS)
    }

    /// Whether nghttp2 would send a new request now: false after a GOAWAY received, after one
    /// nghttp2 queued itself (a protocol error), once the stream ids are spent, or when the
    /// session is done. Not after a GOAWAY we only submitted: that counts once it has left.
    var requestAllowed: Bool { nghttp2_session_check_request_allowed(raw) != 0 }

    /// Whether the client's stream ids are spent (the next one would exceed 2^31-1).
    var streamIDsExhausted: Bool { nghttp2_session_get_next_stream_id(raw) > UInt32(Int32.max) }

    /// Our SETTINGS_MAX_CONCURRENT_STREAMS as acknowledged by the peer.
    package var localMaxConcurrentStreams: UInt32 {
        nghttp2_session_get_local_settings(raw, NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS)
    }

    /// The highest peer-initiated stream id nghttp2 has processed (a natural GOAWAY last-stream-id).
    package var lastProcessedStreamID: Int32 { nghttp2_session_get_last_proc_stream_id(raw) }
}
