/// Payloads of many notifications in one byte array and their end offsets (a personalised job's
/// rendered payloads: one allocation for the job, not one per token). Payload `i` is
/// `bytes[end(i - 1) ..< end(i)]`; a `slice` shares the arrays and starts at another payload.
public struct APNSPayloadBuffer: Sendable, Hashable {
    public let bytes: [UInt8]
    /// Every payload's end in `bytes`, the first one's included (it starts at 0).
    private let ends: [Int32]
    /// The index in `ends` of this buffer's payload 0.
    private let first: Int
    public let count: Int

    /// - Precondition: `ends` ascend, the last one at most `bytes.count`.
    public init(bytes: [UInt8], ends: [Int32]) {
        precondition(ends.last.map { Int($0) <= bytes.count } ?? true, "ends past the bytes")
        self.bytes = bytes
        self.ends = ends
        self.first = 0
        self.count = ends.count
    }

    private init(bytes: [UInt8], ends: [Int32], first: Int, count: Int) {
        self.bytes = bytes
        self.ends = ends
        self.first = first
        self.count = count
    }

    /// The byte range of payload `index` in `bytes`.
    public func range(at index: Int) -> Range<Int> {
        precondition(index >= 0 && index < count, "payload \(index) of \(count)")
        let position = first + index
        return (position == 0 ? 0 : Int(ends[position - 1]))..<Int(ends[position])
    }

    /// Payloads `range` of this buffer, as a buffer sharing its storage.
    public func slice(_ range: Range<Int>) -> APNSPayloadBuffer {
        precondition(range.lowerBound >= 0 && range.upperBound <= count, "payloads \(range) of \(count)")
        return APNSPayloadBuffer(bytes: bytes, ends: ends, first: first + range.lowerBound, count: range.count)
    }

    /// The bytes of all the payloads of this buffer, from the first one's start to the last one's
    /// end.
    public var span: Range<Int> {
        guard count > 0 else { return 0..<0 }
        return range(at: 0).lowerBound..<range(at: count - 1).upperBound
    }

    /// The same payloads' ranges without their bytes (`bytes` empty; `range(at:)` and `span`
    /// unchanged): for a holder that keeps a copy of the bytes in a buffer of its own, so that the
    /// array is not kept alive beside it.
    public var rangesOnly: APNSPayloadBuffer {
        APNSPayloadBuffer(bytes: [], ends: ends, first: first, count: count)
    }

    /// Payload `index` as an array of its own.
    public func payload(at index: Int) -> [UInt8] {
        Array(bytes[range(at: index)])
    }
}
