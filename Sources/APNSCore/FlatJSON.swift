/// A small reader for flat JSON objects of strings and integers: APNs' error bodies and JWT parts.
///
/// Nested values and other types are skipped, not rejected, so a field Apple adds cannot break it;
/// malformed input yields the fields read so far and never traps.
enum FlatJSON {
    enum Value: Hashable {
        case string(String)
        case number(Int64)
    }

    static func fields(_ body: some Collection<UInt8>) -> [String: Value] {
        var reader = Reader(bytes: Array(body))
        return reader.object()
    }

    private struct Reader {
        let bytes: [UInt8]
        var index = 0

        init(bytes: [UInt8]) { self.bytes = bytes }

        mutating func object() -> [String: Value] {
            var result: [String: Value] = [:]
            skipSpace()
            guard peek == UInt8(ascii: "{") else { return result }
            index += 1
            while index < bytes.count {
                skipSpace()
                guard let key = string() else { break }
                skipSpace()
                guard peek == UInt8(ascii: ":") else { break }
                index += 1
                skipSpace()
                if peek == UInt8(ascii: "\"") {
                    guard let value = string() else { break }
                    result[key] = .string(value)
                } else if let value = integer() {
                    result[key] = .number(value)
                } else {
                    skipValue()
                }
                skipSpace()
                guard peek == UInt8(ascii: ",") else { break }
                index += 1
            }
            return result
        }

        var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func skipSpace() {
            while let byte = peek, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 {
                index += 1
            }
        }

        mutating func string() -> String? {
            guard peek == UInt8(ascii: "\"") else { return nil }
            index += 1
            var out: [UInt8] = []
            while let byte = peek {
                index += 1
                switch byte {
                case UInt8(ascii: "\""):
                    return String(decoding: out, as: UTF8.self)
                case UInt8(ascii: "\\"):
                    guard let escaped = peek else { return nil }
                    index += 1
                    switch escaped {
                    case UInt8(ascii: "n"): out.append(0x0A)
                    case UInt8(ascii: "t"): out.append(0x09)
                    case UInt8(ascii: "r"): out.append(0x0D)
                    case UInt8(ascii: "b"): out.append(0x08)
                    case UInt8(ascii: "f"): out.append(0x0C)
                    case UInt8(ascii: "u"):
                        guard index + 4 <= bytes.count,
                            let code = UInt32(String(decoding: bytes[index..<index + 4], as: UTF8.self), radix: 16)
                        else { return nil }
                        index += 4
                        let scalar = Unicode.Scalar(code) ?? "\u{FFFD}"
                        out.append(contentsOf: Array(String(Character(scalar)).utf8))
                    default:
                        out.append(escaped)
                    }
                default:
                    out.append(byte)
                }
            }
            return nil
        }

        mutating func integer() -> Int64? {
            let start = index
            if peek == UInt8(ascii: "-") { index += 1 }
            while let byte = peek, byte >= 0x30 && byte <= 0x39 { index += 1 }
            guard index > start else { return nil }
            if let byte = peek, byte == UInt8(ascii: ".") || byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") {
                index = start
                return nil
            }
            return Int64(String(decoding: bytes[start..<index], as: UTF8.self))
        }

        /// Skips one value of any type, up to the next top-level `,` or `}`.
        mutating func skipValue() {
            var depth = 0
            var inString = false
            while let byte = peek {
                if inString {
                    if byte == UInt8(ascii: "\\") { index += 2; continue }
                    if byte == UInt8(ascii: "\"") { inString = false }
                } else if byte == UInt8(ascii: "\"") {
                    inString = true
                } else if byte == UInt8(ascii: "{") || byte == UInt8(ascii: "[") {
                    depth += 1
                } else if byte == UInt8(ascii: "}") || byte == UInt8(ascii: "]") {
                    if depth == 0 { return }
                    depth -= 1
                } else if byte == UInt8(ascii: ","), depth == 0 {
                    return
                }
                index += 1
            }
        }
    }
}
