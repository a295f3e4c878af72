import COpenSSL

/// An `SSL_CTX` built once from a `TLSConfiguration` and shared by every connection that uses
/// it (creating connections is cheap; loading certificates and trust stores is not).
///
/// `@unchecked Sendable`: the `SSL_CTX` is fully configured in `init` and afterwards only used
/// to create `SSL` objects (`SSL_new`), which OpenSSL allows from many threads at once (its
/// session cache and reference counts are locked internally). The ALPN buffer is never mutated.
public final class TLSContext: @unchecked Sendable {
    public let configuration: TLSConfiguration
    /// Owned; freed in deinit. Every `TLSConnection` keeps this object alive while it uses it.
    let pointer: OpaquePointer
    /// Wire-format ALPN list for the server's select callback; must outlive `pointer`.
    private let alpnWire: UnsafeMutableBufferPointer<UInt8>?
    private let alpnArgument: UnsafeMutablePointer<pushline_alpn_protocols>?

    /// Builds the context. Every problem found (unreadable files, bad keys, a key that does not
    /// match its certificate, missing server identity) is reported at once in
    /// `TLSError.invalidConfiguration`.
    public init(configuration: TLSConfiguration) throws {
        self.configuration = configuration
        var problems: [String] = []
        ERR_clear_error()
        let method = configuration.role == .client ? TLS_client_method() : TLS_server_method()
        guard let ctx = SSL_CTX_new(method) else {
            throw TLSError.invalidConfiguration(["cannot create SSL_CTX: \(OpenSSLErrorStack.drain())"])
        }
        self.pointer = ctx

        let minimum = configuration.minimumVersion == .tls13 ? TLS1_3_VERSION : TLS1_2_VERSION
        if pushline_SSL_CTX_set_min_proto_version(ctx, minimum) != 1 {
            problems.append("cannot set minimum TLS version: \(OpenSSLErrorStack.drain())")
        }
        // Renegotiation only adds attack surface; APNs never uses it.
        pushline_SSL_CTX_disable_renegotiation(ctx)

        if let wire = Self.alpnWireFormat(configuration.alpnProtocols, problems: &problems) {
            let buffer = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: wire.count)
            _ = buffer.initialize(from: wire)
            self.alpnWire = buffer
            if configuration.role == .client {
                self.alpnArgument = nil
                // SSL_CTX_set_alpn_protos copies the list; it returns 0 on success (unlike most).
                if SSL_CTX_set_alpn_protos(ctx, buffer.baseAddress, UInt32(buffer.count)) != 0 {
                    problems.append("cannot set ALPN protocols: \(OpenSSLErrorStack.drain())")
                }
            } else {
                let argument = UnsafeMutablePointer<pushline_alpn_protocols>.allocate(capacity: 1)
                argument.initialize(to: pushline_alpn_protocols(protocols: buffer.baseAddress, length: UInt32(buffer.count)))
                self.alpnArgument = argument
                // The callback reads `argument` for as long as the SSL_CTX lives (freed after it in deinit).
                pushline_SSL_CTX_set_alpn_select(ctx, argument)
            }
        } else {
            self.alpnWire = nil
            self.alpnArgument = nil
        }

        switch configuration.role {
        case .client:
            if configuration.verifyPeer {
                SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nil)
                Self.loadTrust(configuration.trustRoots, into: ctx, what: "trustRoots", problems: &problems)
            } else {
                SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nil)
            }
        case .server:
            if configuration.identity == nil {
                problems.append("identity: a server needs a certificate and private key")
            }
            if case .require(let roots) = configuration.clientCertificateVerification {
                SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nil)
                Self.loadTrust(roots, into: ctx, what: "clientCertificateVerification", problems: &problems)
                Self.advertiseClientCAs(roots, on: ctx, problems: &problems)
            }
            // Needed for session resumption when client certificates are verified.
            let sessionContext = Array("pushline".utf8)
            _ = SSL_CTX_set_session_id_context(ctx, sessionContext, UInt32(sessionContext.count))
        }

        if let identity = configuration.identity {
            Self.useIdentity(identity, on: ctx, problems: &problems)
        }
        ERR_clear_error()
        guard problems.isEmpty else {
            throw TLSError.invalidConfiguration(problems)
        }
    }

    deinit {
        SSL_CTX_free(pointer)
        alpnArgument?.deallocate()
        alpnWire?.deallocate()
    }

    private static func alpnWireFormat(_ protocols: [String], problems: inout [String]) -> [UInt8]? {
        guard !protocols.isEmpty else { return nil }
        var wire: [UInt8] = []
        for name in protocols {
            let bytes = Array(name.utf8)
            guard (1...255).contains(bytes.count) else {
                problems.append("alpnProtocols: '\(name)' must be 1 to 255 bytes")
                continue
            }
            wire.append(UInt8(bytes.count))
            wire.append(contentsOf: bytes)
        }
        return wire.isEmpty ? nil : wire
    }

    private static func loadTrust(_ roots: TLSConfiguration.TrustRoots, into ctx: OpaquePointer, what: String, problems: inout [String]) {
        if roots.includeSystemStore {
            ERR_clear_error()
            if SSL_CTX_set_default_verify_paths(ctx) != 1 {
                problems.append("\(what): cannot load the system trust store: \(OpenSSLErrorStack.drain())")
            }
        }
        for file in roots.caFiles {
            // Parse ourselves first: the messages name the file and say what is wrong with it.
            do {
                _ = try X509Certificate.certificates(pemFile: file)
            } catch {
                problems.append("\(what): \(error)")
                continue
            }
            ERR_clear_error()
            if SSL_CTX_load_verify_locations(ctx, file, nil) != 1 {
                problems.append("\(what): cannot load CA file '\(file)': \(OpenSSLErrorStack.drain())")
            }
        }
        // SSL_CTX_get_cert_store returns the context's store (borrowed); X509_STORE_add_cert takes its own reference.
        let store = SSL_CTX_get_cert_store(ctx)
        for certificate in roots.certificates {
            ERR_clear_error()
            if X509_STORE_add_cert(store, certificate.pointer) != 1 {
                problems.append("\(what): cannot add CA \(certificate.subject): \(OpenSSLErrorStack.drain())")
            }
        }
        if !roots.includeSystemStore && roots.caFiles.isEmpty && roots.certificates.isEmpty {
            problems.append("\(what): no trust roots: nothing could ever verify")
        }
    }

    /// Tells clients which CAs are acceptable (the CertificateRequest's list).
    private static func advertiseClientCAs(_ roots: TLSConfiguration.TrustRoots, on ctx: OpaquePointer, problems: inout [String]) {
        let certificates = roots.certificates + roots.caFiles.flatMap { (try? X509Certificate.certificates(pemFile: $0)) ?? [] }
        for certificate in certificates {
            // SSL_CTX_add_client_CA copies the subject name.
            _ = SSL_CTX_add_client_CA(ctx, certificate.pointer)
        }
        ERR_clear_error()
    }

    private static func useIdentity(_ identity: TLSConfiguration.Identity, on ctx: OpaquePointer, problems: inout [String]) {
        let key: CertifiedKey
        do {
            switch identity {
            case .pemFiles(let chainFile, let keyFile, let password):
                let chain = try X509Certificate.certificates(pemFile: chainFile)
                let privateKey = try PrivateKey(pemFile: keyFile, password: password)
                key = CertifiedKey(certificate: chain[0], privateKey: privateKey, chain: Array(chain.dropFirst()))
            case .pkcs12File(let path, let password):
                key = try CertifiedKey(pkcs12File: path, password: password)
            case .certifiedKey(let certifiedKey):
                key = certifiedKey
            }
        } catch {
            problems.append("identity: \(error)")
            return
        }
        ERR_clear_error()
        // These calls take their own references to the certificate, chain entries and key.
        guard SSL_CTX_use_certificate(ctx, key.certificate.pointer) == 1 else {
            problems.append("identity: certificate \(key.certificate.subject) rejected: \(OpenSSLErrorStack.drain())")
            return
        }
        for certificate in key.chain where pushline_SSL_CTX_add1_chain_cert(ctx, certificate.pointer) != 1 {
            problems.append("identity: chain certificate \(certificate.subject) rejected: \(OpenSSLErrorStack.drain())")
        }
        guard SSL_CTX_use_PrivateKey(ctx, key.privateKey.pointer) == 1 else {
            problems.append("identity: private key rejected: \(OpenSSLErrorStack.drain())")
            return
        }
        if SSL_CTX_check_private_key(ctx) != 1 {
            problems.append("identity: private key does not match certificate \(key.certificate.subject)")
        }
    }
}
