/// What an `NGHTTP2Session` reports from inside nghttp2's callbacks. Implemented by the client and
/// server handlers. Calls arrive synchronously during `receive`/`send`, so implementations only
/// record state and defer user-visible work (promises, delegate calls) until the call returns:
/// nghttp2 must not be re-entered with `mem_recv`/`mem_send` from a callback.
/// A throw becomes `NGHTTP2_ERR_CALLBACK_FAILURE`, which ends the session.
package protocol NGHTTP2SessionEvents: AnyObject {
    func sessionBeginHeaders(streamID: Int32, isRequest: Bool) throws
    func sessionHeader(streamID: Int32, name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>, neverIndex: Bool) throws
    func sessionData(streamID: Int32, bytes: UnsafeRawBufferPointer) throws
    func sessionFrameReceived(_ frame: NGHTTP2Frame) throws
    func sessionFrameSent(_ frame: NGHTTP2Frame) throws
    func sessionFrameNotSent(_ frame: NGHTTP2Frame, libraryError: Int32) throws
    func sessionInvalidFrame(_ frame: NGHTTP2Frame, libraryError: Int32) throws
    func sessionStreamClosed(streamID: Int32, errorCode: HTTP2ErrorCode) throws
    /// Copies up to `buffer.count` body bytes of `streamID`; returns the count and whether the body ended.
    func sessionReadBody(streamID: Int32, into buffer: UnsafeMutableRawBufferPointer) throws -> (count: Int, end: Bool)
}
