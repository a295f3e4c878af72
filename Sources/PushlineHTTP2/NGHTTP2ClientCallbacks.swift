import CNGHTTP2

// The client's per-request callbacks (each response header, DATA, frames received and sent,
// stream closed, and the request body's reads): the same forwarding as NGHTTP2Callbacks.swift,
// but straight to the session's `HTTP2ClientHandler` (`withSessionOwner`), as the server's hot
// callbacks do. Other callbacks stay the shared ones.

/// Replaces the hot callbacks on a client session's callbacks table (after `installNGHTTP2Callbacks`).
func installNGHTTP2ClientCallbacks(_ callbacks: OpaquePointer?) {
    nghttp2_session_callbacks_set_on_header_callback(callbacks, onClientHeader)
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks, onClientDataChunk)
    nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks, onClientFrameReceived)
    nghttp2_session_callbacks_set_on_frame_send_callback(callbacks, onClientFrameSent)
    nghttp2_session_callbacks_set_on_stream_close_callback(callbacks, onClientStreamClose)
}

private func onClientHeader(
    _ session: OpaquePointer?,
    _ frame: UnsafePointer<nghttp2_frame>?,
    _ name: UnsafePointer<UInt8>?,
    _ nameLength: Int,
    _ value: UnsafePointer<UInt8>?,
    _ valueLength: Int,
    _ flags: UInt8,
    _ userData: UnsafeMutableRawPointer?
) -> Int32 {
    guard let frame else { return 0 }
    return withSessionOwner(userData, as: HTTP2ClientHandler.self) {
        try $0.sessionHeader(
            streamID: frame.pointee.hd.stream_id,
            name: UnsafeBufferPointer(start: name, count: nameLength),
            value: UnsafeBufferPointer(start: value, count: valueLength),
            neverIndex: flags & UInt8(NGHTTP2_NV_FLAG_NO_INDEX.rawValue) != 0
        )
    }
}

private func onClientDataChunk(
    _ session: OpaquePointer?,
    _ flags: UInt8,
    _ streamID: Int32,
    _ data: UnsafePointer<UInt8>?,
    _ length: Int,
    _ userData: UnsafeMutableRawPointer?
) -> Int32 {
    withSessionOwner(userData, as: HTTP2ClientHandler.self) {
        try $0.sessionData(streamID: streamID, bytes: UnsafeRawBufferPointer(start: data, count: length))
    }
}

private func onClientFrameReceived(
    _ session: OpaquePointer?,
    _ frame: UnsafePointer<nghttp2_frame>?,
    _ userData: UnsafeMutableRawPointer?
) -> Int32 {
    guard let frame else { return 0 }
    return withSessionOwner(userData, as: HTTP2ClientHandler.self) { try $0.sessionFrameReceived(NGHTTP2Frame(frame)) }
}

private func onClientFrameSent(
    _ session: OpaquePointer?,
    _ frame: UnsafePointer<nghttp2_frame>?,
    _ userData: UnsafeMutableRawPointer?
) -> Int32 {
    guard let frame else { return 0 }
    return withSessionOwner(userData, as: HTTP2ClientHandler.self) { try $0.sessionFrameSent(NGHTTP2Frame(frame)) }
}

private func onClientStreamClose(
    _ session: OpaquePointer?,
    _ streamID: Int32,
    _ errorCode: UInt32,
    _ userData: UnsafeMutableRawPointer?
) -> Int32 {
    withSessionOwner(userData, as: HTTP2ClientHandler.self) {
        try $0.sessionStreamClosed(streamID: streamID, errorCode: HTTP2ErrorCode(rawValue: errorCode))
    }
}

/// A request body's read callback: copies body bytes straight into nghttp2's frame buffer. A
/// throw resets only that stream.
func clientReadBodyCallback(
    _ session: OpaquePointer?,
    _ streamID: Int32,
    _ buffer: UnsafeMutablePointer<UInt8>?,
    _ length: Int,
    _ dataFlags: UnsafeMutablePointer<UInt32>?,
    _ source: UnsafeMutablePointer<nghttp2_data_source>?,
    _ userData: UnsafeMutableRawPointer?
) -> Int {
    var read = (count: 0, end: true)
    let failed = withSessionOwner(userData, as: HTTP2ClientHandler.self, failure: Int32(NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE.rawValue)) {
        read = try $0.sessionReadBody(streamID: streamID, into: UnsafeMutableRawBufferPointer(start: buffer, count: length))
    }
    if failed != 0 { return Int(failed) }
    if read.end { dataFlags?.pointee |= NGHTTP2_DATA_FLAG_EOF.rawValue }
    return read.count
}
