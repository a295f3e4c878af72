/// The `apns-id`s of `count` consecutive notifications (`APNSIDGenerator.reserve`): the id of
/// index `i` is computed when it is needed, into a caller's buffer or a `String`, so a job's
/// requests and result records carry their ids without a string per token.
public struct APNSIDBlock: Sendable, Hashable {
    @usableFromInline let seed: UInt64
    @usableFromInline let first: UInt64
    public let count: Int

    init(seed: UInt64, first: UInt64, count: Int) {
        self.seed = seed
        self.first = first
        self.count = count
    }

    /// Calls `body` with the canonical form of id `index` (36 ASCII bytes), valid only inside `body`.
    /// Inlinable, so that each caller gets it specialized: generic across the module boundary, it
    /// looked its temporary buffer's metadata up at run time on every call (once per request and
    /// once per result record).
    @inlinable
    public func withID<Result>(at index: Int, _ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        precondition(index >= 0 && index < count, "id \(index) of a block of \(count)")
        let (high, low) = APNSIDGenerator.value(seed: seed, n: first &+ UInt64(index))
        return try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 36) { buffer in
            let written = APNSIDGenerator.format(high, low, into: buffer)
            return try body(UnsafeRawBufferPointer(UnsafeMutableBufferPointer(rebasing: buffer[..<written])))
        }
    }

    /// The ids `range` of this block, as a block: its id `i` is this block's id
    /// `range.lowerBound + i`.
    public func slice(_ range: Range<Int>) -> APNSIDBlock {
        precondition(range.lowerBound >= 0 && range.upperBound <= count, "ids \(range) of a block of \(count)")
        return APNSIDBlock(seed: seed, first: first &+ UInt64(range.lowerBound), count: range.count)
    }

    /// Id `index` as a string.
    public func id(at index: Int) -> String {
        withID(at: index) { String(decoding: $0, as: UTF8.self) }
    }
}
