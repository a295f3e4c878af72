/// Why a client stream ended without a response. `isUnprocessed` says whether the server
/// certainly did not act on the request, so it is safe to send again (on another connection).
public struct HTTP2StreamError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Kind: Sendable, Hashable {
        /// The server reset the stream with REFUSED_STREAM: not processed.
        case refused
        /// The stream id is above the last-stream-id of a GOAWAY the server sent: not processed.
        case goAway(lastStreamID: Int32, errorCode: HTTP2ErrorCode)
        /// The request never left this side (connection ended first): not processed.
        case notSent
        /// The connection ended while the stream was in flight: the server may have processed it.
        case connectionClosed
        /// The server reset the stream with another error code: it may have been processed.
        /// PROTOCOL_ERROR says the server found the request malformed (RFC 9113, section 8.1.1).
        case reset(HTTP2ErrorCode)
        /// The server ended the connection with an error that a request's bytes can cause
        /// (`HTTP2ErrorCode.mayBlameARequest`: a GOAWAY with PROTOCOL_ERROR, COMPRESSION_ERROR or
        /// FRAME_SIZE_ERROR) while this stream's request had been sent and was unanswered: it
        /// may have been processed, and it may be the request the server refused.
        case connectionError(HTTP2ErrorCode)
        /// This side cancelled the stream (`cancel(streamID:)`, e.g. a request timeout).
        case cancelled
        /// Submitted after a GOAWAY was received or sent, or on a closed connection: not sent.
        case connectionUnavailable(String)
        /// nghttp2 rejected the request or the stream (library error code and message).
        case library(code: Int32, message: String)
    }

    public var kind: Kind
    /// The stream id, when one had been assigned.
    public var streamID: Int32?

    public init(_ kind: Kind, streamID: Int32?) {
        self.kind = kind
        self.streamID = streamID
    }

    /// True when the server certainly did not process the request: resend it elsewhere.
    public var isUnprocessed: Bool {
        switch kind {
        case .refused, .goAway, .notSent, .connectionUnavailable: true
        case .connectionClosed, .reset, .connectionError, .cancelled, .library: false
        }
    }

    public var description: String {
        let stream = streamID.map { "stream \($0): " } ?? ""
        switch kind {
        case .refused: return stream + "refused by the server (REFUSED_STREAM), not processed: safe to resend"
        case .goAway(let last, let code):
            return stream + "above GOAWAY last-stream-id \(last) (\(code)), not processed: resend on another connection"
        case .notSent: return stream + "never sent before the connection ended: safe to resend"
        case .connectionClosed: return stream + "connection closed with the request in flight: it may have been processed"
        case .reset(let code): return stream + "reset by the server with \(code)"
        case .connectionError(let code): return stream + "in flight when the server ended the connection with \(code)"
        case .cancelled: return stream + "cancelled locally"
        case .connectionUnavailable(let why): return stream + "connection unavailable (\(why)): use another connection"
        case .library(let code, let message): return stream + "nghttp2 error \(code): \(message)"
        }
    }
}
