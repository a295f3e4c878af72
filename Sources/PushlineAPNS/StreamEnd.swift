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
}
