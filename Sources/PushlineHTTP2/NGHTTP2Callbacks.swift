import CNGHTTP2

// nghttp2's callbacks: file-level C functions that find their `NGHTTP2Session` through the
// session's user data (an unretained `Unmanaged` pointer set by the session itself) and forward
// to its `events`. A Swift throw becomes nghttp2's failure code.

/// Registers every callback the session uses on a callbacks table.
func installNGHTTP2Callbacks(_ callbacks: OpaquePointer?) {
    nghttp2_session_callbacks_set_on_begin_headers_callback(callbacks, onBeginHeaders)
    nghttp2_session_callbacks_set_on_header_callback(callbacks, onHeader)
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks, onDataChunk)
    nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks, onFrameReceived)
    nghttp2_session_callbacks_set_on_frame_send_callback(callbacks, onFrameSent)
    nghttp2_session_callbacks_set_on_frame_not_send_callback(callbacks, onFrameNotSent)
    nghttp2_session_callbacks_set_on_invalid_frame_recv_callback(callbacks, onInvalidFrame)
    nghttp2_session_callbacks_set_on_stream_close_callback(callbacks, onStreamClose)
}

private let callbackFailure = Int32(NGHTTP2_ERR_CALLBACK_FAILURE.rawValue)

@inline(__always)
private func events(_ userData: UnsafeMutableRawPointer?) -> (any NGHTTP2SessionEvents)? {
    guard let userData else { return nil }
    return Unmanaged<NGHTTP2Session>.fromOpaque(userData).takeUnretainedValue().events
}

private func onBeginHeaders(
    _ session: OpaquePointer?,
    _ frame: UnsafePointer<nghttp2_frame>?,
    _ userData: UnsafeMutableRawPointer?
) -> Int32 {
    guard let frame, let events = events(userData) else { return 0 }
    do {
        try events.sessionBeginHeaders(
            streamID: frame.pointee.hd.stream_id,
            isRequest: frame.pointee.headers.cat == NGHTTP2_HCAT_REQUEST
        )
        return 0
    } catch {
        return callbackFailure
    }
}

private func onHeader(
    _ session: OpaquePointer?,
    _ frame: UnsafePointer<nghttp2_frame>?,
    _ name: UnsafePointer<UInt8>?,
    _ nameLength: Int,
    _ value: UnsafePointer<UInt8>?,
    _ valueLength: Int,
    _ flags: UInt8,
    _ userData: UnsafeMutableRawPointer?
) -> Int32 {
    guard let frame, let events = events(userData) else { return 0 }
    do {
        try events.sessionHeader(
            streamID: frame.pointee.hd.stream_id,
            name: UnsafeBufferPointer(start: name, count: nameLength),
            value: UnsafeBufferPointer(start: value, count: valueLength),
            neverIndex: flags & UInt8(NGHTTP2_NV_FLAG_NO_INDEX.rawValue) != 0
        )
        return 0
    } catch {
        return callbackFailure
    }
}

private func onDataChunk(
    _ session: OpaquePointer?,
    _ flags: UInt8,
    _ streamID: Int32,
    _ data: UnsafePointer<UInt8>?,
    _ length: Int,
    _ userData: UnsafeMutableRawPointer?
) -> Int32 {
    guard let events = events(userData) else { return 0 }
    do {
        try events.sessionData(streamID: streamID, bytes: UnsafeRawBufferPointer(start: data, count: length))
        return 0
    } catch {
        return callbackFailure
    }
}

private func onFrameReceived(
    _ session: OpaquePointer?,
    _ frame: UnsafePointer<nghttp2_frame>?,
    _ userData: UnsafeMutableRawPointer?
) -> Int32 {
    guard let frame, let events = events(userData) else { return 0 }
    do {
        try events.sessionFrameReceived(NGHTTP2Frame(frame))
        return 0
    } catch {
        return callbackFailure
    }
}

private func onFrameSent(
    _ session: OpaquePointer?,
    _ frame: UnsafePointer<nghttp2_frame>?,
    _ userData: UnsafeMutableRawPointer?
) -> Int32 {
    guard let frame, let events = events(userData) else { return 0 }
    do {
        try events.sessionFrameSent(NGHTTP2Frame(frame))
        return 0
    } catch {
        return callbackFailure
    }
}

private func onFrameNotSent(
    _ session: OpaquePointer?,
    _ frame: UnsafePointer<nghttp2_frame>?,
    _ libraryError: Int32,
    _ userData: UnsafeMutableRawPointer?
) -> Int32 {
    guard let frame, let events = events(userData) else { return 0 }
    do {
        try events.sessionFrameNotSent(NGHTTP2Frame(frame), libraryError: libraryError)
        return 0
    } catch {
        return callbackFailure
    }
}

private func onInvalidFrame(
    _ session: OpaquePointer?,
    _ frame: UnsafePointer<nghttp2_frame>?,
    _ libraryError: Int32,
    _ userData: UnsafeMutableRawPointer?
) -> Int32 {
    guard let frame, let events = events(userData) else { return 0 }
    do {
        try events.sessionInvalidFrame(NGHTTP2Frame(frame), libraryError: libraryError)
        return 0
    } catch {
        return callbackFailure
    }
}

private func onStreamClose(
    _ session: OpaquePointer?,
    _ streamID: Int32,
    _ errorCode: UInt32,
    _ userData: UnsafeMutableRawPointer?
) -> Int32 {
    guard let events = events(userData) else { return 0 }
    do {
        try events.sessionStreamClosed(streamID: streamID, errorCode: HTTP2ErrorCode(rawValue: errorCode))
        return 0
    } catch {
        return callbackFailure
    }
}

/// The data provider's read callback (shared by requests and responses): copies body bytes
/// straight into nghttp2's frame buffer. A throw resets only that stream.
func readBodyCallback(
    _ session: OpaquePointer?,
    _ streamID: Int32,
    _ buffer: UnsafeMutablePointer<UInt8>?,
    _ length: Int,
    _ dataFlags: UnsafeMutablePointer<UInt32>?,
    _ source: UnsafeMutablePointer<nghttp2_data_source>?,
    _ userData: UnsafeMutableRawPointer?
) -> Int {
    guard let events = events(userData) else { return Int(NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE.rawValue) }
    do {
        let (count, end) = try events.sessionReadBody(
            streamID: streamID,
            into: UnsafeMutableRawBufferPointer(start: buffer, count: length)
        )
        if end { dataFlags?.pointee |= NGHTTP2_DATA_FLAG_EOF.rawValue }
        return count
    } catch {
        return Int(NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE.rawValue)
    }
}
