import PushlineAPNSCore
import Testing

/// `APNSPayloadBuffer`: payloads back to back in one array, and slices that share it.
@Suite struct APNSPayloadBufferTests {
    @Test func eachPayloadAndEachSliceReadTheirOwnBytes() {
        let payloads = ["{}", #"{"a":1}"#, "", #"{"b":"xyz"}"#].map { Array($0.utf8) }
        var ends: [Int32] = []
        var bytes: [UInt8] = []
        for payload in payloads {
            bytes += payload
            ends.append(Int32(bytes.count))
        }
        let buffer = APNSPayloadBuffer(bytes: bytes, ends: ends)
        #expect(buffer.count == 4)
        #expect((0..<4).map(buffer.payload(at:)) == payloads)
        #expect(buffer.span == 0..<bytes.count)
        let slice = buffer.slice(1..<4)
        #expect(slice.count == 3)
        #expect((0..<3).map(slice.payload(at:)) == Array(payloads[1...]))
        #expect(slice.span == 2..<bytes.count)
        let inner = slice.slice(2..<3)
        #expect(inner.payload(at: 0) == payloads[3] && inner.range(at: 0) == 9..<bytes.count)
        #expect(buffer.slice(2..<2).span == 0..<0)
        let ranges = slice.rangesOnly
        #expect(ranges.bytes.isEmpty && ranges.span == slice.span && (0..<3).map(ranges.range(at:)) == (0..<3).map(slice.range(at:)))
    }
}
