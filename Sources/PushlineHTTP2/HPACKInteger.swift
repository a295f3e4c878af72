/// Reading HPACK's integer representation (RFC 7541, section 5.1): an N-bit prefix in the first
/// byte, whose other bits are the representation's flags, then 7 bits per continuation byte.
/// (`HPACKWriter.writeInteger` writes it.)
enum HPACKInteger {
    /// Reads an integer with an N-bit prefix at `offset`; nil when the bytes end first or it is
    /// implausibly long. Returns the value and the bytes it took.
    static func read(_ bytes: UnsafeRawBufferPointer, at offset: Int, prefix: Int) -> (value: Int, count: Int)? {
        guard offset < bytes.count else { return nil }
        let limit = (1 << prefix) - 1
        var value = Int(bytes[offset]) & limit
        guard value == limit else { return (value, 1) }
        var shift = 0
        var index = offset + 1
        while index < bytes.count, shift <= 28 {
            let byte = Int(bytes[index])
            value += (byte & 0x7f) << shift
            index += 1
            if byte & 0x80 == 0 { return (value, index - offset) }
            shift += 7
        }
        return nil
    }
}
