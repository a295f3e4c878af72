/// Device-token rules: a token is a non-empty, even-length string of hex digits.
///
/// APNs tokens are 32 bytes today (64 hex characters), but Apple has said they may grow, so the
/// length is not fixed here. Tokens are sent lowercased, as APNs issues them.
public enum DeviceToken {
    /// The longest token accepted (bytes of hex text); generous, to stay future-proof.
    public static let maxHexLength = 200

    /// Whether `token` is well-formed hex of even length.
    ///
    /// Inlinable (like the other generic checks here) so that callers in other modules get a
    /// specialized loop over their own collection, not a generic one through witness tables: the
    /// worker checks every token of every job.
    @inlinable
    public static func isValid<S: StringProtocol>(_ token: S) -> Bool {
        isValid(utf8: token.utf8)
    }

    /// Whether the UTF-8 bytes are well-formed hex of even length.
    @inlinable
    public static func isValid<C: Collection>(utf8: C) -> Bool where C.Element == UInt8 {
        let count = utf8.count
        guard count > 0, count % 2 == 0, count <= maxHexLength else { return false }
        return utf8.allSatisfy(isHexDigit)
    }

    /// The first eight characters, for logs: enough to correlate, too little to address a device.
    public static func redacted(_ token: String) -> String {
        token.count <= 8 ? token : String(token.prefix(8)) + "…"
    }

    @inlinable @inline(__always)
    static func isHexDigit(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x61 && byte <= 0x66) || (byte >= 0x41 && byte <= 0x46)
    }
}
