/// Device tokens as one byte array and their end offsets: a job's tokens in two allocations
/// instead of a `String` each. Token `i` is `bytes[ends[i - 1] ..< ends[i]]` (from 0 for the
/// first).
public struct APNSDeviceTokens: Sendable, Hashable {
    public private(set) var bytes: [UInt8]
    public private(set) var ends: [Int32]

    public init() {
        bytes = []
        ends = []
    }

    public init(_ tokens: some Sequence<String>) {
        self.init()
        for token in tokens { append(token) }
    }

    /// Room for `count` tokens of `length` bytes each, so appending them allocates nothing more.
    public mutating func reserveCapacity(tokens count: Int, length: Int = 64) {
        bytes.reserveCapacity(count * length)
        ends.reserveCapacity(count)
    }

    public mutating func append(_ token: String) {
        var token = token
        token.withUTF8 { append(bytes: UnsafeRawBufferPointer($0)) }
    }

    public mutating func append(bytes token: UnsafeRawBufferPointer) {
        bytes.append(contentsOf: token)
        ends.append(Int32(bytes.count))
    }

    public var count: Int { ends.count }

    public var isEmpty: Bool { ends.isEmpty }

    /// The byte range of token `index` in `bytes`.
    public func range(at index: Int) -> Range<Int> {
        (index == 0 ? 0 : Int(ends[index - 1]))..<Int(ends[index])
    }

    /// Calls `body` with the bytes of token `index`, valid only inside `body`.
    public func withToken<Result>(at index: Int, _ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        let range = range(at: index)
        return try bytes.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[range])) }
    }

    /// Token `index` as a string.
    public func token(at index: Int) -> String {
        withToken(at: index) { String(decoding: $0, as: UTF8.self) }
    }
}
