/// Device tokens as one byte array and their end offsets: a job's tokens in one or two
/// allocations instead of a `String` each. While every token has the same length (APNs tokens
/// are 64 hex digits), token `i` is `bytes[i * length ..< (i + 1) * length]` and no offsets are
/// kept; otherwise token `i` is `bytes[ends[i - 1] ..< ends[i]]` (from 0 for the first).
public struct APNSDeviceTokens: Sendable, Hashable {
    public private(set) var bytes: [UInt8]
    /// Every token's end, once the lengths differ (empty while they are uniform).
    private var ends: [Int32]
    /// The tokens' common length while they are uniform, and how many there are.
    private var uniformLength: Int?
    public private(set) var count = 0

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
    }

    /// Room for tokens of `bytes` bytes in all.
    public mutating func reserveCapacity(bytes count: Int) {
        bytes.reserveCapacity(count)
    }

    public mutating func append(_ token: String) {
        var token = token
        token.withUTF8 { append(bytes: UnsafeRawBufferPointer($0)) }
    }

    public mutating func append(bytes token: UnsafeRawBufferPointer) {
        if count == 0 {
            uniformLength = token.count
        } else if let length = uniformLength, length != token.count {
            // The first token of another length: from here on, every token's end is kept.
            ends = (1...count).map { Int32($0 * length) }
            uniformLength = nil
        }
        bytes.append(contentsOf: token)
        if uniformLength == nil { ends.append(Int32(bytes.count)) }
        count += 1
    }

    public var isEmpty: Bool { count == 0 }

    /// The byte range of token `index` in `bytes`.
    public func range(at index: Int) -> Range<Int> {
        precondition(index >= 0 && index < count, "token \(index) of \(count)")
        if let length = uniformLength { return (index * length)..<((index + 1) * length) }
        return (index == 0 ? 0 : Int(ends[index - 1]))..<Int(ends[index])
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
