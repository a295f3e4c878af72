import Testing

@testable import PushlineHTTP2

/// The Huffman coder against the RFC's table applied one bit at a time (no table of our own, no
/// stores of several bytes): the same bytes for strings of every length up to 200, of any bytes
/// and of hex digits (a device token's path), where the coder writes four bytes at a time.
@Suite struct HPACKHuffmanTests {
    /// RFC 7541, 5.2: each symbol's code, most significant bit first, padded with ones.
    static func reference(_ bytes: [UInt8]) -> [UInt8] {
        var bitsOut: [Bool] = []
        for byte in bytes {
            let code = HPACKHuffmanTable.codes[Int(byte)]
            let length = Int(HPACKHuffmanTable.lengths[Int(byte)])
            for bit in stride(from: length - 1, through: 0, by: -1) { bitsOut.append(code >> UInt32(bit) & 1 == 1) }
        }
        while bitsOut.count % 8 != 0 { bitsOut.append(true) }
        return stride(from: 0, to: bitsOut.count, by: 8).map { index in
            bitsOut[index..<index + 8].reduce(UInt8(0)) { $0 << 1 | ($1 ? 1 : 0) }
        }
    }

    static func coded(_ bytes: [UInt8]) -> [UInt8] {
        bytes.withUnsafeBytes { source in
            let count = HPACKHuffman.encodedCount(source)
            return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
                HPACKHuffman.encode(source, into: UnsafeMutableRawBufferPointer(buffer))
                initialized = count
            }
        }
    }

    @Test func everyLengthCodesAsTheRFCSays() {
        var generator = SystemRandomNumberGenerator()
        let hex = Array("0123456789abcdef".utf8)
        for length in 0...200 {
            let any = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let common = (0..<length).map { _ in hex.randomElement(using: &generator)! }
            #expect(Self.coded(any) == Self.reference(any), "any bytes, length \(length)")
            #expect(Self.coded(common) == Self.reference(common), "hex, length \(length)")
        }
    }

    /// RFC 7541, 5.2, as nghttp2 chooses: Huffman-coded (H set) when that is shorter, else as it is.
    static func literal(_ bytes: [UInt8]) -> [UInt8] {
        let coded = reference(bytes)
        let (flag, body) = coded.count < bytes.count ? (UInt8(0x80), coded) : (0, bytes)
        var out: [UInt8] = []
        if body.count < 127 {
            out.append(flag | UInt8(body.count))
        } else {
            out.append(flag | 127)
            var rest = body.count - 127
            while rest >= 128 {
                out.append(UInt8(rest & 0x7f) | 0x80)
                rest >>= 7
            }
            out.append(UInt8(rest))
        }
        return out + body
    }

    static func written(_ bytes: [UInt8], room: Int) -> [UInt8]? {
        var memory = [UInt8](repeating: 0, count: room)
        return memory.withUnsafeMutableBytes { memory in
            var writer = HPACKWriter(memory)
            let field = bytes.withUnsafeBytes { writer.writeString($0) }
            return Array(field)
        }
    }

    /// The one-pass coder (which gives up past its limit) writes what the two passes write: for
    /// strings that code shorter, longer (bytes with long codes) and alike, under and over 127
    /// bytes, with room to spare and with exactly the room the field needs.
    @Test func aLiteralIsWrittenAsTheRFCSaysInOnePass() {
        var generator = SystemRandomNumberGenerator()
        let hex = Array("0123456789abcdef".utf8)
        for length in 0...200 {
            let any = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let common = (0..<length).map { _ in hex.randomElement(using: &generator)! }
            let long = (0..<length).map { _ in UInt8.random(in: 0xf0...0xff, using: &generator) }
            for bytes in [any, common, long] {
                let expected = Self.literal(bytes)
                #expect(Self.written(bytes, room: expected.count + 64) == expected, "length \(length)")
                #expect(Self.written(bytes, room: max(expected.count, 6)) == expected, "length \(length), no room to spare")
            }
        }
    }

    @Test func aDevicePathAndAnAPNsIDCodeAsTheRFCSays() {
        let path = Array("/3/device/\(String(repeating: "0f1e2d3c4b5a6978", count: 4))".utf8)
        let id = Array("4d4f4a8e-1b2c-4000-8000-00000000002a".utf8)
        #expect(Self.coded(path) == Self.reference(path))
        #expect(Self.coded(id) == Self.reference(id))
        #expect(Self.coded(path).count == path.withUnsafeBytes { HPACKHuffman.encodedCount($0) })
    }
}
