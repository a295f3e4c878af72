import PushlineAPNSCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One connection's provider-token trust, as a value: the token it verified last, and APNs'
/// rules about it. The token a connection already verified is only checked for age (ES256
/// verification costs more than everything else a request does in the mock), by comparing bytes;
/// a new one is verified, and may replace the connection's token only 20 minutes (by `iat`)
/// after it (else 429 TooManyProviderTokenUpdates).
struct MockTokenTrust {
    /// What one check decided: nil when the token is good, else APNs' answer; and whether a token
    /// with a DER signature was newly verified (APNs accepts those; the mock counts them).
    struct Check: Hashable {
        var rejection: APNSRequestRules.Rejection?
        var newDERSignedToken = false
    }

    let verifier: MockTokenVerifier
    /// The token this connection verified last.
    private(set) var current: MockTokenVerifier.Verified?
    /// `current`'s JWT as bytes, compared with each request's authorization header.
    private var currentJWT: [UInt8] = []

    /// How long a token is good after its `iat`, and how long before it may be replaced.
    static let lifetime: Int64 = 3600
    static let minimumRefreshInterval: Int64 = 20 * 60

    init(verifier: MockTokenVerifier) {
        self.verifier = verifier
    }

    /// Checks a request's `authorization` header value (nil when it had none) at `now` (unix
    /// seconds).
    mutating func check(_ authorization: UnsafeRawBufferPointer?, now: Int64) -> Check {
        if let current, let authorization, isCurrent(authorization) {
            return Check(rejection: now - current.issuedAt > Self.lifetime ? .init(403, .expiredProviderToken) : nil)
        }
        let text = authorization.map { String(decoding: $0, as: UTF8.self) }
        switch verifier.verify(authorization: text, now: now) {
        case .failure(let rejection):
            return Check(rejection: rejection)
        case .success(let verified):
            if let current, verified.issuedAt - current.issuedAt < Self.minimumRefreshInterval {
                return Check(rejection: .init(429, .tooManyProviderTokenUpdates))
            }
            current = verified
            currentJWT = Array(verified.jwt.utf8)
            return Check(rejection: nil, newDERSignedToken: verified.derSignature)
        }
    }

    /// `check` for a header held as a `String` (broadcasts and channel management, which are rare).
    mutating func check(_ authorization: String?, now: Int64) -> Check {
        guard var authorization else { return check(nil as UnsafeRawBufferPointer?, now: now) }
        return authorization.withUTF8 { check(UnsafeRawBufferPointer($0), now: now) }
    }

    /// Whether `authorization` is "bearer " (any case) followed by exactly the current JWT.
    private func isCurrent(_ authorization: UnsafeRawBufferPointer) -> Bool {
        let scheme: StaticString = "bearer "
        let schemeCount = scheme.utf8CodeUnitCount
        guard authorization.count == currentJWT.count + schemeCount else { return false }
        for index in 0..<schemeCount {
            let byte = authorization[index]
            let lowered = byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
            if lowered != scheme.utf8Start[index] { return false }
        }
        return currentJWT.withUnsafeBytes { jwt in
            jwt.count == 0 || memcmp(authorization.baseAddress! + schemeCount, jwt.baseAddress!, jwt.count) == 0
        }
    }
}
