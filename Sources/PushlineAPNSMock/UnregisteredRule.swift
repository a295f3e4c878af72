/// Which device tokens the mock answers with 410 Unregistered, and since when.
///
/// A token is unregistered when it is listed, or when its hash falls below the configured
/// fraction. The timestamp is derived from the token's hash too, so the same token always gets
/// the same `timestamp` — across connections, restarts and runs — as a real device would.
public struct UnregisteredRule: Sendable {
    public var listed: Set<String>
    public var fraction: Double
    /// Timestamps fall in the 30 days before this (ms since the epoch).
    public var epochMilliseconds: Int64

    public init(listed: Set<String>, fraction: Double, epochMilliseconds: Int64 = 1_790_000_000_000) {
        self.listed = Set(listed.map { $0.lowercased() })
        self.fraction = fraction
        self.epochMilliseconds = epochMilliseconds
    }

    /// Whether any token can be unregistered (callers skip making the token's `String` otherwise).
    public var mayMatch: Bool { fraction > 0 || !listed.isEmpty }

    /// The 410 timestamp when `token` is unregistered, else nil.
    public func unregisteredSince(_ token: String) -> Int64? {
        guard mayMatch else { return nil }
        let hash = Self.fnv1a(token)
        let byFraction = Double(hash >> 11) / Double(1 << 53) < fraction
        guard byFraction || (!listed.isEmpty && listed.contains(token.lowercased())) else { return nil }
        let thirtyDays: UInt64 = 30 * 24 * 3600 * 1000
        return epochMilliseconds - Int64((hash >> 7) % thirtyDays)
    }

    /// FNV-1a, 64 bits, of the ASCII-lowercased text: small, stable across platforms and releases
    /// (unlike `Hasher`), and the same for a token in either case.
    static func fnv1a(_ text: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte)
            hash &*= 0x0000_0100_0000_01B3
        }
        // Finalise (splitmix) so nearby tokens spread over the whole range.
        hash ^= hash >> 33
        hash &*= 0xff51_afd7_ed55_8ccd
        hash ^= hash >> 33
        return hash
    }
}
