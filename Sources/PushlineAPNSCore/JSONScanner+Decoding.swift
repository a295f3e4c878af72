/// Reading values the scanner has already validated: a string with its escapes resolved, and an
/// integer that fits in `Int64`. They read the bytes of a `Value` and check nothing the scan did.
extension JSONScanner {
    /// Decodes a string value (escapes resolved). The value must come from this scanner.
    public static func string(_ bytes: UnsafeBufferPointer<UInt8>, _ value: Value) throws(Error) -> String {
        precondition(value.kind == .string)
        let inner = (value.range.lowerBound + 1)..<(value.range.upperBound - 1)
        let body = UnsafeBufferPointer(rebasing: bytes[inner])
        if !body.contains(UInt8(ascii: "\\")) {
            return String(decoding: body, as: UTF8.self)
        }
        var out: [UInt8] = []
        out.reserveCapacity(body.count)
        var i = 0
        while i < body.count {
            let byte = body[i]
            i += 1
            guard byte == UInt8(ascii: "\\") else {
                out.append(byte)
                continue
            }
            let escaped = body[i]
            i += 1
            switch escaped {
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "u"):
                var code = hex4(body, i)
                i += 4
                if (0xD800..<0xDC00).contains(code), i + 6 <= body.count, body[i] == UInt8(ascii: "\\"),
                    body[i + 1] == UInt8(ascii: "u")
                {
                    let low = hex4(body, i + 2)
                    if (0xDC00..<0xE000).contains(low) {
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                        i += 6
                    }
                }
                let scalar = Unicode.Scalar(code) ?? "\u{FFFD}"
                out.append(contentsOf: String(Character(scalar)).utf8)
            default:
                out.append(escaped)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// An integer value that fits in Int64 (no fraction, no exponent), else nil.
    public static func integer(_ bytes: UnsafeBufferPointer<UInt8>, _ value: Value) -> Int64? {
        guard value.kind == .number else { return nil }
        var result: Int64 = 0
        var negative = false
        for i in value.range {
            let byte = bytes[i]
            if byte == UInt8(ascii: "-") {
                negative = true
                continue
            }
            guard byte >= 0x30 && byte <= 0x39 else { return nil }
            let (times, overflow1) = result.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times.addingReportingOverflow(Int64(byte - 0x30))
            guard !overflow1, !overflow2 else { return nil }
            result = sum
        }
        return negative ? -result : result
    }

    private static func hex4(_ body: UnsafeBufferPointer<UInt8>, _ at: Int) -> UInt32 {
        var code: UInt32 = 0
        for k in 0..<4 {
            let byte = body[at + k]
            let digit: UInt32
            switch byte {
            case 0x30...0x39: digit = UInt32(byte - 0x30)
            case 0x61...0x66: digit = UInt32(byte - 0x61 + 10)
            default: digit = UInt32(byte - 0x41 + 10)
            }
            code = code << 4 | digit
        }
        return code
    }
}
