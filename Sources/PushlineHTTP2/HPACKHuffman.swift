/// HPACK's Huffman coding of a string literal (RFC 7541, section 5.2): the coded length, and the
/// coded bytes, each in one pass over the string.
enum HPACKHuffman {
    /// Per byte value: its code (right-aligned) shifted left by 8, or'ed with its length in bits;
    /// one load per byte.
    private static let entries: [UInt64] = (0..<256).map {
        UInt64(HPACKHuffmanTable.codes[$0]) << 8 | UInt64(HPACKHuffmanTable.lengths[$0])
    }

    /// The string's length once coded, in whole bytes.
    static func encodedCount(_ bytes: UnsafeRawBufferPointer) -> Int {
        entries.withUnsafeBufferPointer { entries in
            var bits: UInt64 = 0
            for byte in bytes { bits &+= entries[Int(byte)] & 0xff }
            return Int((bits &+ 7) >> 3)
        }
    }

    /// Codes `bytes` into `destination` in one pass when the coding takes at most `limit` bytes,
    /// and returns its length; nil (with `destination` scribbled on) when it would take more.
    /// `destination` must hold `limit + 4` bytes when the coding may not fit: the coder writes four
    /// bytes at a time and notices only afterwards that it went past the limit (a coding that fits
    /// is never written past).
    ///
    /// Written with pointers and one table: the same loop over two arrays, indexed, compiled to a
    /// loop about five times slower (values moved through vector registers on every byte).
    ///
    /// A literal is coded only when that makes it shorter (`HPACKWriter.writeString`): coding it
    /// straight away, and writing it as it is when the coding turns out longer, spares the pass
    /// that first counted the coded length (at one token per job, where a request's `:path` and
    /// `apns-id` change every time, the field memo's coding went from 2.70% to 2.47% of the worker).
    static func encode(_ bytes: UnsafeRawBufferPointer, into destination: UnsafeMutableRawPointer, limit: Int) -> Int? {
        guard limit >= 0 else { return nil }
        guard let source = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return 0 }
        return entries.withUnsafeBufferPointer { entries -> Int? in
            // Codes are at most 30 bits, and fewer than 32 bits wait in `pending` when one is
            // added, so 64 bits never overflow.
            var pending: UInt64 = 0
            var bits: UInt64 = 0
            var out = destination
            let last = destination + limit
            var next = source
            let end = source + bytes.count
            while next < end {
                let entry = entries[Int(next.pointee)]
                next += 1
                let length = entry & 0xff
                pending = (pending &<< length) | (entry &>> 8)
                bits &+= length
                if bits >= 32 {
                    // Past the limit already: at most 4 bytes beyond it were written.
                    guard out < last else { return nil }
                    bits &-= 32
                    out.storeBytes(of: UInt32(truncatingIfNeeded: pending &>> bits).bigEndian, as: UInt32.self)
                    out += 4
                }
            }
            guard out <= last else { return nil }
            while bits >= 8 {
                bits &-= 8
                out.storeBytes(of: UInt8(truncatingIfNeeded: pending &>> bits), as: UInt8.self)
                out += 1
            }
            if bits > 0 {
                let padding = 8 - bits
                out.storeBytes(of: UInt8(truncatingIfNeeded: (pending &<< padding) | ((1 &<< padding) &- 1)), as: UInt8.self)
                out += 1
            }
            return out <= last ? out - destination : nil
        }
    }

    /// Codes `bytes` into `destination`, which holds exactly `encodedCount(bytes)` bytes; the last
    /// byte is padded with the most significant bits of EOS (ones). The one-pass coder with the
    /// exact length as its limit: it never writes past a coding that fits.
    static func encode(_ bytes: UnsafeRawBufferPointer, into destination: UnsafeMutableRawBufferPointer) {
        guard let start = destination.baseAddress else { return }
        let written = encode(bytes, into: start, limit: destination.count)
        precondition(written == destination.count, "HPACK Huffman: destination is not the coded length")
    }
}
