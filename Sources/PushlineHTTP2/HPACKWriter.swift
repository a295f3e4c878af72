/// Writes a header block straight into memory the caller reserved (`HTTP2RequestHeadersFrame`
/// reserves `HPACKWriter.bound` bytes of the outgoing buffer): no capacity check and no copy
/// per field.
struct HPACKWriter {
    private let start: UnsafeMutableRawPointer
    private let capacity: Int
    /// Bytes written so far.
    private(set) var count = 0

    /// The most a field's representation can take beyond its name and value: a flags-and-index
    /// integer and two string lengths (each at most 5 bytes for lengths under 2^28).
    static let overheadPerField = 16

    init(_ memory: UnsafeMutableRawBufferPointer) {
        start = memory.baseAddress!
        capacity = memory.count
    }

    mutating func write(_ bytes: UnsafeRawBufferPointer) {
        guard let source = bytes.baseAddress else { return }
        precondition(count + bytes.count <= capacity, "HPACK: a field outgrew the bound reserved for its block")
        (start + count).copyMemory(from: source, byteCount: bytes.count)
        count += bytes.count
    }

    mutating func write(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { write($0) }
    }

    /// An integer with an N-bit prefix whose first byte carries `flags` (RFC 7541, section 5.1).
    mutating func writeInteger(_ value: Int, prefix: Int, flags: UInt8) {
        precondition(count + 6 <= capacity, "HPACK: a field outgrew the bound reserved for its block")
        let limit = (1 << prefix) - 1
        guard value >= limit else {
            writeByte(flags | UInt8(value))
            return
        }
        writeByte(flags | UInt8(limit))
        var rest = value - limit
        while rest >= 128 {
            writeByte(UInt8(rest & 0x7f) | 0x80)
            rest >>= 7
        }
        writeByte(UInt8(rest))
    }

    /// A string literal (RFC 7541, section 5.2), Huffman-coded when that is shorter, as nghttp2
    /// decides, and coded in place. Returns the bytes written (valid until the memory is reused).
    @discardableResult
    mutating func writeString(_ string: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        let begin = count
        // Under 127 bytes either length is one byte: code it after that byte in one pass, and
        // write the string as it is if the coding is not shorter.
        if string.count < 127, count + 1 + string.count + 4 <= capacity {
            if let coded = HPACKHuffman.encode(string, into: start + count + 1, limit: string.count - 1) {
                writeByte(0x80 | UInt8(coded))
                count += coded
            } else {
                writeByte(UInt8(string.count))
                write(string)
            }
            return UnsafeRawBufferPointer(start: start + begin, count: count - begin)
        }
        let coded = HPACKHuffman.encodedCount(string)
        if coded < string.count {
            writeInteger(coded, prefix: 7, flags: 0x80)
            precondition(count + coded <= capacity, "HPACK: a field outgrew the bound reserved for its block")
            HPACKHuffman.encode(string, into: UnsafeMutableRawBufferPointer(start: start + count, count: coded))
            count += coded
        } else {
            writeInteger(string.count, prefix: 7, flags: 0x00)
            write(string)
        }
        return UnsafeRawBufferPointer(start: start + begin, count: count - begin)
    }

    /// Replaces `bytes` (keeping its storage) with what `body` writes through a writer of
    /// `bound` bytes: the coded pieces a memo keeps.
    static func write(into bytes: inout [UInt8], bound: Int, _ body: (inout HPACKWriter) -> Void) {
        bytes.removeAll(keepingCapacity: true)
        bytes.append(contentsOf: repeatElement(0, count: bound))
        let written = bytes.withUnsafeMutableBytes { memory in
            var writer = HPACKWriter(memory)
            body(&writer)
            return writer.count
        }
        bytes.removeLast(bound - written)
    }

    private mutating func writeByte(_ byte: UInt8) {
        (start + count).storeBytes(of: byte, as: UInt8.self)
        count += 1
    }
}
