/// A failure loading, creating or using keys and certificates (not a TLS connection failure).
public struct CryptoError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure, for callers that react differently to each.
    public enum Code: Sendable, Hashable {
        /// A file could not be read or written.
        case fileAccess
        /// The bytes are not a valid key / certificate / PKCS#12 in the expected format.
        case invalidEncoding
        /// A valid key of the wrong kind (ES256 needs an EC P-256 key).
        case unsupportedKey
        /// The PKCS#12 password is wrong (or its MAC does not verify).
        case wrongPassword
        /// Signing or verification could not be performed (a failed verification is `false`, not this).
        case signing
        /// Building a certificate or PKCS#12 failed.
        case generation
    }

    public var code: Code
    /// What was being done and with what, e.g. "cannot read 'AuthKey.p8': No such file or directory".
    public var message: String
    /// OpenSSL's errors for this failure, if OpenSSL was involved.
    public var openSSLErrors: OpenSSLErrorStack

    public init(_ code: Code, _ message: String, openSSLErrors: OpenSSLErrorStack = OpenSSLErrorStack(entries: [])) {
        self.code = code
        self.message = message
        self.openSSLErrors = openSSLErrors
    }

    /// An error with the current thread's OpenSSL error queue attached (and drained).
    package static func openSSL(_ code: Code, _ message: String) -> CryptoError {
        CryptoError(code, message, openSSLErrors: .drain())
    }

    public var description: String {
        openSSLErrors.entries.isEmpty ? message : "\(message) [\(openSSLErrors)]"
    }
}
