/// Scanning a string value: control characters refused, escapes checked, UTF-8 validated, and
/// plain ASCII runs skipped a word at a time (the scan's hot path: tokens, ids, payload text).
extension JSONScanner {
    /// A string: control characters refused, escapes checked, UTF-8 validated.
    mutating func string() throws(Error) {
        index += 1
        while index < bytes.count {
            index = Self.plainRunEnd(bytes, from: index)
            guard index < bytes.count else { break }
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                index += 1
                return
            }
            if byte == UInt8(ascii: "\\") {
                index += 1
                guard let escaped = peek else { break }
                switch escaped {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"),
                    UInt8(ascii: "f"), UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                    index += 1
                case UInt8(ascii: "u"):
                    guard index + 5 <= bytes.count else { throw error("truncated \\u escape") }
                    for k in 1...4 where !DeviceToken.isHexDigit(bytes[index + k]) {
                        throw error("invalid \\u escape")
                    }
                    index += 5
                default:
                    throw error("invalid escape")
                }
                continue
            }
            if byte < 0x20 { throw error("control character in a string") }
            if byte < 0x80 {
                index += 1
                continue
            }
            try utf8Sequence(byte)
        }
        throw error("unterminated string")
    }

    /// The first index at or after `start` holding a byte that is not plain printable ASCII (a
    /// quote, a backslash, a control character or a non-ASCII byte), or `bytes.count`. Tokens,
    /// ids and most payload text are plain: they are skipped eight bytes at a time, and the
    /// special byte is found inside its word (most strings are shorter than a word: their closing
    /// quote is in the first one).
    @inline(__always)
    private static func plainRunEnd(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        var index = start
        let count = bytes.count
        guard let base = bytes.baseAddress else { return count }
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        while index + 8 <= count {
            // Little-endian: byte k of the word is bytes[index + k].
            let word = UInt64(littleEndian: UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self))
            // A byte is special when it is below 0x20, at or above 0x80, '"' or '\\'. The
            // classic "has a zero byte" test, on the word itself and on the word XOR each quote.
            // A borrow may also flag bytes above the first special one, never below it: the
            // lowest flag is exact.
            let control = (word &- ones &* 0x20) & ~word
            let quote = word ^ (ones &* 0x22)
            let backslash = word ^ (ones &* 0x5C)
            let special = (control | word | ((quote &- ones) & ~quote) | ((backslash &- ones) & ~backslash)) & highs
            if special != 0 { return index + special.trailingZeroBitCount >> 3 }
            index += 8
        }
        while index < count {
            let byte = base[index]
            guard byte >= 0x20, byte < 0x80, byte != UInt8(ascii: "\""), byte != UInt8(ascii: "\\") else { return index }
            index += 1
        }
        return index
    }

    /// Validates one multi-byte UTF-8 sequence starting with `lead` (RFC 3629: no overlongs,
    /// no surrogates, nothing above U+10FFFF).
    private mutating func utf8Sequence(_ lead: UInt8) throws(Error) {
        let length: Int
        var low: UInt8 = 0x80
        var high: UInt8 = 0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0:
            length = 3
            low = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED:
            length = 3
            high = 0x9F
        case 0xF0:
            length = 4
            low = 0x90
        case 0xF1...0xF3: length = 4
        case 0xF4:
            length = 4
            high = 0x8F
        default: throw error("invalid UTF-8")
        }
        guard index + length <= bytes.count else { throw error("truncated UTF-8") }
        let second = bytes[index + 1]
        guard second >= low && second <= high else { throw error("invalid UTF-8") }
        for k in 2..<length where bytes[index + k] & 0xC0 != 0x80 {
            throw error("invalid UTF-8")
        }
        index += length
    }
}
