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

    /// `isValid(utf8:)` for bytes in memory (a job record's token, where it lies): eight bytes
    /// checked at a time, without a branch per byte. The worker checks every token of every job.
    public static func isValid(utf8 bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        let count = bytes.count
        guard count > 0, count % 2 == 0, count <= maxHexLength, let base = bytes.baseAddress else { return false }
        var index = 0
        var outside: UInt64 = 0
        while index + 8 <= count {
            outside |= nonHexBytes(UInt64(littleEndian: UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self)))
            index += 8
        }
        if index < count {
            // The last 2, 4 or 6 bytes, padded with '0's.
            var word = UInt64(0x3030_3030_3030_3030)
            let tail = UnsafeRawBufferPointer(start: base + index, count: count - index)
            withUnsafeMutableBytes(of: &word) { UnsafeMutableRawBufferPointer(rebasing: $0[..<tail.count]).copyMemory(from: tail) }
            outside |= nonHexBytes(UInt64(littleEndian: word))
        }
        return outside == 0
    }

    /// The high bit of each byte of `word` that is not a hex digit ('0'-'9', 'a'-'f', 'A'-'F').
    /// Each range test adds to every byte at once: with bytes below 0x80, no sum carries into
    /// the next byte, and a sum's high bit says whether the byte reached the bound.
    @inline(__always)
    static func nonHexBytes(_ word: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        let low = word & ~highs
        func within(_ first: UInt64, _ last: UInt64) -> UInt64 {
            (low &+ ones &* (0x80 &- first)) & ~(low &+ ones &* (0x7F &- last))
        }
        let hex = (within(0x30, 0x39) | within(0x61, 0x66) | within(0x41, 0x46)) & highs
        return (~hex | word) & highs
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
