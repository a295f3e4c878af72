/// Whether a string can be sent as an HTTP/2 field (header) value, as a pure function.
///
/// RFC 9113 §8.2.1 makes a request malformed when a field value holds NUL, CR or LF, or starts
/// or ends with whitespace (SP or HTAB); the server then resets the stream or closes the
/// connection, so the value must be refused before it is sent. The other control characters
/// (0x01-0x1F but HTAB, and DEL) are refused too: RFC 9110 §5.5 leaves them out of a field value
/// and nghttp2, on which APNs-like servers and our mock sit, treats them as malformed the same
/// way. Inner spaces and tabs, and bytes above 0x7F, are allowed. An empty value is valid HTTP;
/// whether a header may be empty is the caller's rule.
public enum HTTPFieldValue {
    /// Why a value cannot be a field value; `description` is the reason as people read it
    /// ("ends with whitespace", "holds a control character (CR)").
    public enum Problem: Sendable, Hashable, CustomStringConvertible {
        /// The first byte is SP or HTAB.
        case leadingWhitespace
        /// The last byte is SP or HTAB.
        case trailingWhitespace
        /// A control character other than HTAB (NUL, CR and LF among them), or DEL.
        case controlCharacter(UInt8)

        public var description: String {
            switch self {
            case .leadingWhitespace: "starts with whitespace"
            case .trailingWhitespace: "ends with whitespace"
            case .controlCharacter(let byte): "holds a control character (\(Self.name(of: byte)))"
            }
        }

        /// A control character's usual name, or its code in hex.
        static func name(of byte: UInt8) -> String {
            switch byte {
            case 0x00: "NUL"
            case 0x0A: "LF"
            case 0x0D: "CR"
            case 0x7F: "DEL"
            default: "0x" + (byte < 0x10 ? "0" : "") + String(byte, radix: 16, uppercase: true)
            }
        }
    }

    /// The first problem of `value`, or nil when it can be sent as it is. A control character
    /// anywhere is named before the whitespace at either end.
    public static func problem(_ value: String) -> Problem? {
        var value = value
        return value.withUTF8 { problem(utf8: UnsafeRawBufferPointer($0)) }
    }

    /// `problem(_:)` over a value's UTF-8 bytes.
    public static func problem(utf8 value: UnsafeRawBufferPointer) -> Problem? {
        // UTF-8 never uses bytes below 0x80 inside a multi-byte character, so a byte-wise scan
        // sees exactly the ASCII control characters.
        for byte in value where (byte < 0x20 && byte != tab) || byte == 0x7F {
            return .controlCharacter(byte)
        }
        if let first = value.first, first == space || first == tab { return .leadingWhitespace }
        if let last = value.last, last == space || last == tab { return .trailingWhitespace }
        return nil
    }

    private static let space = UInt8(ascii: " ")
    private static let tab = UInt8(ascii: "\t")
}
