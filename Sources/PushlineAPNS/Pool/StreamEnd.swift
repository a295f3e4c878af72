import PushlineAPNSCore

/// How one stream of a connection ended, as the connection reports it to the pool.
enum StreamEnd: Sendable {
    /// APNs answered.
    case response(APNSResponse)
    /// The server certainly did not process it (REFUSED_STREAM, above a GOAWAY's last stream,
    /// never sent): a free resend.
    case unprocessed
    /// The local request deadline passed and the stream was reset.
    case timedOut
    /// The connection failed or the server reset the stream: it may have been processed.
    case lost
    /// The server reset the stream with PROTOCOL_ERROR: it found this request malformed (RFC
    /// 9113, section 8.1.1). The same bytes would be refused again.
    case malformed
    /// The server ended the connection with an error a request can cause (PROTOCOL_ERROR,
    /// COMPRESSION_ERROR, FRAME_SIZE_ERROR) while this request was unanswered: it may be the one
    /// the server refused (docs/apns.md, "Requests a server refuses as malformed").
    case connectionError
}
