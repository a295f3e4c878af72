import Synchronization

/// Makes `apns-id` values: version-4 style UUIDs in canonical lowercase form, unique within a
/// process (a counter) and across processes (a random seed), without a syscall per id.
public final class APNSIDGenerator: Sendable {
    private let counter = Atomic<UInt64>(0)
    private let seed: UInt64

    public init(seed: UInt64 = UInt64.random(in: .min ... .max)) {
        self.seed = seed
    }

    public func next() -> String {
        let (high, low) = nextValue()
        return Self.format(high, low)
    }

    /// `next()` without making a `String` (for servers answering at a high rate): calls `body`
    /// with the id's 36 ASCII bytes, valid only inside `body`.
    public func withNext(_ body: (UnsafeRawBufferPointer) -> Void) {
        let (high, low) = nextValue()
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 36) { buffer in
            let count = Self.format(high, low, into: buffer)
            body(UnsafeRawBufferPointer(UnsafeMutableBufferPointer(rebasing: buffer[..<count])))
        }
    }

    /// Reserves the next `count` ids at once, for notifications addressed by index (a job's
    /// tokens): one atomic operation, and no string until one is asked for.
    public func reserve(_ count: Int) -> APNSIDBlock {
        let last = counter.wrappingAdd(UInt64(max(0, count)), ordering: .relaxed).newValue
        return APNSIDBlock(seed: seed, first: last &- UInt64(max(0, count)) &+ 1, count: max(0, count))
    }

    private func nextValue() -> (high: UInt64, low: UInt64) {
        Self.value(seed: seed, n: counter.wrappingAdd(1, ordering: .relaxed).newValue)
    }

    /// The id of counter value `n` (ids are a pure function of the seed and the counter).
    @usableFromInline
    static func value(seed: UInt64, n: UInt64) -> (high: UInt64, low: UInt64) {
        var high = Self.mix(seed ^ n)
        var low = Self.mix(high ^ 0x9E37_79B9_7F4A_7C15 ^ n)
        high = (high & 0xFFFF_FFFF_FFFF_0FFF) | 0x0000_0000_0000_4000
        low = (low & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000
        return (high, low)
    }

    private static func mix(_ value: UInt64) -> UInt64 {
        var z = value &+ 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// "00" to "ff": a byte's two hex digits (a constant: no lazy global to check).
    private static var hexPairs: StaticString {
        """
        000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f202122232425262728292a2b2c2d2e2f\
        303132333435363738393a3b3c3d3e3f404142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f\
        606162636465666768696a6b6c6d6e6f707172737475767778797a7b7c7d7e7f808182838485868788898a8b8c8d8e8f\
        909192939495969798999a9b9c9d9e9fa0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebf\
        c0c1c2c3c4c5c6c7c8c9cacbcccdcecfd0d1d2d3d4d5d6d7d8d9dadbdcdddedfe0e1e2e3e4e5e6e7e8e9eaebecedeeef\
        f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff
        """
    }

    static func format(_ high: UInt64, _ low: UInt64) -> String {
        String(unsafeUninitializedCapacity: 36) { format(high, low, into: $0) }
    }

    /// The canonical text (8-4-4-4-12 lowercase hex digits) of the UUID `high`, `low`: 36 bytes
    /// into `buffer`, two digits per byte of the value (a nibble at a time, through an array,
    /// was 0.6% of the worker at one token per job).
    @usableFromInline
    static func format(_ high: UInt64, _ low: UInt64, into buffer: UnsafeMutableBufferPointer<UInt8>) -> Int {
        precondition(buffer.count >= 36, "a UUID takes 36 bytes")
        let out = UnsafeMutableRawPointer(buffer.baseAddress!)
        let pairs = UnsafeRawPointer(hexPairs.utf8Start)
        // Bytes `first..<first + count` of `value` (most significant first), from `offset` on.
        func put(_ value: UInt64, bytes first: Int, count: Int, at offset: Int) {
            for index in 0..<count {
                let byte = Int(truncatingIfNeeded: value &>> UInt64(56 - 8 * (first + index))) & 0xff
                out.storeBytes(
                    of: pairs.loadUnaligned(fromByteOffset: 2 * byte, as: UInt16.self),
                    toByteOffset: offset + 2 * index,
                    as: UInt16.self
                )
            }
        }
        put(high, bytes: 0, count: 4, at: 0)
        out.storeBytes(of: UInt8(ascii: "-"), toByteOffset: 8, as: UInt8.self)
        put(high, bytes: 4, count: 2, at: 9)
        out.storeBytes(of: UInt8(ascii: "-"), toByteOffset: 13, as: UInt8.self)
        put(high, bytes: 6, count: 2, at: 14)
        out.storeBytes(of: UInt8(ascii: "-"), toByteOffset: 18, as: UInt8.self)
        put(low, bytes: 0, count: 2, at: 19)
        out.storeBytes(of: UInt8(ascii: "-"), toByteOffset: 23, as: UInt8.self)
        put(low, bytes: 2, count: 6, at: 24)
        return 36
    }
}
