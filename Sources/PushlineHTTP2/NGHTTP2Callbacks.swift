import CNGHTTP2

// nghttp2's callbacks that both roles share: file-level C functions that find their
// `NGHTTP2Session` through the session's user data (an unretained `Unmanaged` pointer set by the
// session itself) and forward to its `events`. A Swift throw becomes nghttp2's failure code.
// The per-request callbacks are each role's own (NGHTTP2ClientCallbacks.swift, and the server's
// NGHTTP2ServerCallbacks.swift), which reach their handler without the existential's retain.

/// Registers the shared callbacks on a callbacks table; the session's role installs the rest.
func installNGHTTP2Callbacks(_ callbacks: OpaquePointer?) {
    nghttp2_session_callbacks_set_on_frame_send_callback(callbacks, onFrameSent)
    nghttp2_session_callbacks_set_on_frame_not_send_callback(callbacks, onFrameNotSent)
    nghttp2_session_callbacks_set_on_invalid_frame_recv_callback(callbacks, onInvalidFrame)
}

private let callbackFailure = Int32(NGHTTP2_ERR_CALLBACK_FAILURE.rawValue)

@inline(__always)
private func events(_ userData: UnsafeMutableRawPointer?) -> (any NGHTTP2SessionEvents)? {
    guard let userData else { return nil }
    return Unmanaged<NGHTTP2Session>.fromOpaque(userData).takeUnretainedValue().events
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
