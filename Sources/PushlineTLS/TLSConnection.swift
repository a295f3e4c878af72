import COpenSSL
import NIOCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One TLS connection: owns the `SSL*` (and through it the BIO) and frees it in deinit.
/// Every call clears the thread's error queue first, so a failure carries only its own errors.
/// Not thread-safe: used only on the channel's event loop.
final class TLSConnection {
    private let ssl: OpaquePointer
    private let bio: ByteBufferBIO
    /// Kept alive: the SSL refers to the context's ALPN buffer and settings.
    let context: TLSContext

    init(context: TLSContext, serverHostname: String?, allocator: ByteBufferAllocator) throws {
        self.context = context
        ERR_clear_error()
        guard let ssl = SSL_new(context.pointer) else {
            throw TLSError.invalidConfiguration(["cannot create SSL: \(OpenSSLErrorStack.drain())"])
        }
        self.ssl = ssl
        self.bio = try ByteBufferBIO(allocator: allocator)
        // With the same BIO for both directions, SSL_set_bio takes over our single reference.
        SSL_set_bio(ssl, bio.bio, bio.bio)

        switch context.configuration.role {
        case .server:
            SSL_set_accept_state(ssl)
        case .client:
            SSL_set_connect_state(ssl)
            if let host = serverHostname ?? context.configuration.serverHostname {
                try configureServerName(host, verify: context.configuration.verifyPeer)
            }
        }
    }

    deinit {
        SSL_free(ssl)
    }

    /// SNI for names (never for IP addresses, RFC 6066), and the name or IP the certificate must match.
    private func configureServerName(_ host: String, verify: Bool) throws {
        let isIP = Self.isIPAddress(host)
        if !isIP, pushline_SSL_set_tlsext_host_name(ssl, host) != 1 {
            throw TLSError.invalidConfiguration(["serverHostname '\(host)': cannot set SNI: \(OpenSSLErrorStack.drain())"])
        }
        guard verify else { return }
        if isIP {
            // SSL_get0_param is borrowed from the SSL; the IP must match an IP SAN.
            guard X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host) == 1 else {
                throw TLSError.invalidConfiguration(["serverHostname '\(host)': not a usable IP address: \(OpenSSLErrorStack.drain())"])
            }
        } else if SSL_set1_host(ssl, host) != 1 {
            throw TLSError.invalidConfiguration(["serverHostname '\(host)': cannot set host to verify: \(OpenSSLErrorStack.drain())"])
        }
    }

    static func isIPAddress(_ host: String) -> Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1
    }

    // MARK: ciphertext

    func receiveCiphertext(_ buffer: ByteBuffer) {
        bio.receive(buffer)
    }

    /// All ciphertext produced since the last call, or nil.
    func takeCiphertext() -> ByteBuffer? {
        bio.takeOutbound()
    }

    var unconsumedCiphertextBytes: Int { bio.inboundBytes }

    // MARK: operations

    func handshake() -> TLSOperationResult<Void> {
        ERR_clear_error()
        let rc = SSL_do_handshake(ssl)
        return rc == 1 ? .complete(()) : classify(rc)
    }

    /// Decrypts into `buffer`'s writable space (at least one byte must be free); `.complete(n)` with n > 0.
    func read(into buffer: inout ByteBuffer) -> TLSOperationResult<Int> {
        ERR_clear_error()
        var rc: Int32 = 0
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: 1) { space in
            rc = SSL_read(ssl, space.baseAddress, Int32(clamping: space.count))
            return rc > 0 ? Int(rc) : 0
        }
        return rc > 0 ? .complete(Int(rc)) : classify(rc)
    }

    /// Encrypts all of `bytes` (the BIO never refuses a write, so SSL_write never stops halfway).
    func write(_ buffer: ByteBuffer) -> TLSOperationResult<Void> {
        guard buffer.readableBytes > 0 else { return .complete(()) }
        ERR_clear_error()
        let rc = buffer.withUnsafeReadableBytes { SSL_write(ssl, $0.baseAddress, Int32(clamping: $0.count)) }
        return rc > 0 ? .complete(()) : classify(rc)
    }

    /// Queues our close_notify. `.complete` once sent (whether or not the peer's arrived).
    func shutdown() -> TLSOperationResult<Void> {
        ERR_clear_error()
        let rc = SSL_shutdown(ssl)
        // 0: our close_notify is written, the peer's has not arrived; we do not wait for it.
        return rc >= 0 ? .complete(()) : classify(rc)
    }

    private func classify<Value>(_ rc: Int32) -> TLSOperationResult<Value> {
        // SSL_get_error inspects the error queue, so it runs before the queue is drained.
        switch SSL_get_error(ssl, rc) {
        case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
            return .incomplete
        case SSL_ERROR_ZERO_RETURN:
            return .closed
        default:
            return .failed(OpenSSLErrorStack.drain())
        }
    }

    // MARK: after the handshake

    /// The ALPN protocol both sides agreed on, if any.
    var negotiatedProtocol: String? {
        var data: UnsafePointer<UInt8>?
        var length: UInt32 = 0
        SSL_get0_alpn_selected(ssl, &data, &length)
        guard let data, length > 0 else { return nil }
        return String(decoding: UnsafeBufferPointer(start: data, count: Int(length)), as: UTF8.self)
    }

    /// The peer's verified leaf certificate (a server sees the client's only when it asked for one).
    var peerCertificate: X509Certificate? {
        // SSL_get1_peer_certificate returns a new reference, which the wrapper takes.
        SSL_get1_peer_certificate(ssl).map(X509Certificate.init(taking:))
    }

    /// Why certificate verification failed, if it did ("hostname mismatch", ...).
    var verificationFailure: String? {
        let result = SSL_get_verify_result(ssl)
        guard result != X509_V_OK else { return nil }
        return String(cString: X509_verify_cert_error_string(result))
    }
}
