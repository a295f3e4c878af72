/// The outcome of one non-blocking OpenSSL call, as swift-nio-ssl's SSLConnection reports it.
enum TLSOperationResult<Value> {
    /// Done.
    case complete(Value)
    /// OpenSSL needs more ciphertext from the peer (SSL_ERROR_WANT_READ / WANT_WRITE).
    case incomplete
    /// The peer sent close_notify (reads only: SSL_ERROR_ZERO_RETURN).
    case closed
    /// Failed; the error queue as it stood.
    case failed(OpenSSLErrorStack)
}
