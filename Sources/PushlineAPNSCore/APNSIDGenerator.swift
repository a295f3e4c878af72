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

    private static let hex: [UInt8] = Array("0123456789abcdef".utf8)

    static func format(_ high: UInt64, _ low: UInt64) -> String {
        String(unsafeUninitializedCapacity: 36) { format(high, low, into: $0) }
    }

    /// Writes the canonical form into `buffer` (at least 36 bytes); returns the count written.
    @usableFromInline
    static func format(_ high: UInt64, _ low: UInt64, into buffer: UnsafeMutableBufferPointer<UInt8>) -> Int {
        var index = 0
        func put(_ value: UInt64, nibbles: Int, from shift: Int) {
            for i in 0..<nibbles {
                buffer[index] = hex[Int((value >> UInt64(shift - 4 * i)) & 0xF)]
                index += 1
            }
        }
        put(high, nibbles: 8, from: 60)
        buffer[index] = UInt8(ascii: "-")
        index += 1
        put(high, nibbles: 4, from: 28)
        buffer[index] = UInt8(ascii: "-")
        index += 1
        put(high, nibbles: 4, from: 12)
        buffer[index] = UInt8(ascii: "-")
        index += 1
        put(low, nibbles: 4, from: 60)
        buffer[index] = UInt8(ascii: "-")
        index += 1
        put(low, nibbles: 12, from: 44)
        return index
    }
}
