import CNGHTTP2
import PushlineHTTP2

// The server's per-request callbacks (begin headers, each header, DATA, frame received, stream
// closed): the same forwarding as NGHTTP2Callbacks.swift, but straight to the session's
// `HTTP2ServerHandler` (`withSessionOwner`), without retaining it. Other callbacks stay the shared
// ones.

/// Replaces the hot callbacks on a server session's callbacks table (after `installNGHTTP2Callbacks`).
func installNGHTTP2ServerCallbacks(_ callbacks: OpaquePointer?) {
    nghttp2_session_callbacks_set_on_begin_headers_callback(callbacks, onServerBeginHeaders)
    nghttp2_session_callbacks_set_on_header_callback(callbacks, onServerHeader)
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks, onServerDataChunk)
    nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks, onServerFrameReceived)
    nghttp2_session_callbacks_set_on_stream_close_callback(callbacks, onServerStreamClose)
}

private func onServerBeginHeaders(
    _ session: OpaquePointer?,
    _ frame: UnsafePointer<nghttp2_frame>?,
    _ userData: UnsafeMutableRawPointer?
) -> Int32 {
    guard let frame else { return 0 }
    return withSessionOwner(userData, as: HTTP2ServerHandler.self) {
        try $0.sessionBeginHeaders(
            streamID: frame.pointee.hd.stream_id,
            isRequest: frame.pointee.headers.cat == NGHTTP2_HCAT_REQUEST
        )
    }
}

private func onServerHeader(
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
    return withSessionOwner(userData, as: HTTP2ServerHandler.self) {
        try $0.sessionHeader(
            streamID: frame.pointee.hd.stream_id,
            name: UnsafeBufferPointer(start: name, count: nameLength),
            value: UnsafeBufferPointer(start: value, count: valueLength),
            neverIndex: flags & UInt8(NGHTTP2_NV_FLAG_NO_INDEX.rawValue) != 0
        )
    }
}

private func onServerDataChunk(
    _ session: OpaquePointer?,
    _ flags: UInt8,
    _ streamID: Int32,
    _ data: UnsafePointer<UInt8>?,
    _ length: Int,
    _ userData: UnsafeMutableRawPointer?
) -> Int32 {
    withSessionOwner(userData, as: HTTP2ServerHandler.self) {
        try $0.sessionData(streamID: streamID, bytes: UnsafeRawBufferPointer(start: data, count: length))
    }
}

private func onServerFrameReceived(
    _ session: OpaquePointer?,
    _ frame: UnsafePointer<nghttp2_frame>?,
    _ userData: UnsafeMutableRawPointer?
) -> Int32 {
    guard let frame else { return 0 }
    return withSessionOwner(userData, as: HTTP2ServerHandler.self) { try $0.sessionFrameReceived(NGHTTP2Frame(frame)) }
}

private func onServerStreamClose(
    _ session: OpaquePointer?,
    _ streamID: Int32,
    _ errorCode: UInt32,
    _ userData: UnsafeMutableRawPointer?
) -> Int32 {
    withSessionOwner(userData, as: HTTP2ServerHandler.self) {
        try $0.sessionStreamClosed(streamID: streamID, errorCode: HTTP2ErrorCode(rawValue: errorCode))
    }
}
