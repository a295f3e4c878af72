/// A strict, allocation-light JSON scanner over UTF-8 bytes (RFC 8259).
///
/// It validates without building a tree: `validate` checks one complete value; `members` reads a
/// top-level object into its keys and the byte ranges of their values, so a caller can forward a
/// value's bytes untouched (Pushline forwards job payloads byte-for-byte). Nesting is bounded by
/// `maxDepth` so hostile input cannot exhaust the stack; strings must be valid UTF-8.
///
/// It lives here because APNs' rules read JSON (error bodies, JWT parts, payload validation in
/// `APNSRequestRules`); the worker's job decoder and `pushline enqueue` use the same scanner.
public struct JSONScanner {
    public enum Kind: Sendable, Hashable {
        case object, array, string, number, bool, null
    }

    /// One value: its kind and where its bytes are.
    public struct Value: Sendable, Hashable {
        public var kind: Kind
        public var range: Range<Int>
    }

    /// Why the bytes are not the JSON expected, and where.
    public struct Error: Swift.Error, Sendable, Hashable, CustomStringConvertible {
        public var message: String
        public var offset: Int
        public var description: String { "\(message) at byte \(offset)" }
    }

    private let bytes: UnsafeBufferPointer<UInt8>
    private let maxDepth: Int
    private var index = 0

    private init(_ bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int) {
        self.bytes = bytes
        self.maxDepth = maxDepth
    }

    // MARK: Entry points

    /// Checks that `bytes` hold exactly one JSON value (whitespace around it allowed).
    public static func validate(_ bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int = 64) throws(Error) -> Value {
        var scanner = JSONScanner(bytes, maxDepth: maxDepth)
        scanner.skipSpace()
        let value = try scanner.value(depth: 0)
        scanner.skipSpace()
        guard scanner.index == bytes.count else { throw scanner.error("trailing bytes after the JSON value") }
        return value
    }

    /// Reads a top-level object: each key (decoded) with its value's kind and byte range.
    /// Every nested value is validated. Throws when `bytes` are not exactly one JSON object.
    public static func members(
        _ bytes: UnsafeBufferPointer<UInt8>,
        maxDepth: Int = 64
    ) throws(Error) -> [(key: String, value: Value)] {
        var result: [(key: String, value: Value)] = []
        try forEachMember(bytes, maxDepth: maxDepth) { key, value in
            // One allocation for a dozen members, not one per doubling (and none for no object).
            if result.isEmpty { result.reserveCapacity(16) }
            result.append((key, value))
        }
        return result
    }

    /// `members` without the array: each key (decoded) with its value, in order, to `body`. The
    /// whole input is checked before this returns, so a member handed to `body` may still be
    /// followed by an error.
    public static func forEachMember(
        _ bytes: UnsafeBufferPointer<UInt8>,
        maxDepth: Int = 64,
        _ body: (String, Value) -> Void
    ) throws(Error) {
        try forEachMemberKey(bytes, maxDepth: maxDepth) { key, value throws(Error) in
            body(try Self.string(bytes, key), value)
        }
    }

    /// `forEachMember` with each key as it stands in `bytes`: a `.string` value, quotes included,
    /// escapes unresolved. For callers that match keys on their bytes rather than make a `String`
    /// of each (a job decoder reads a dozen known keys per record).
    public static func forEachMemberKey(
        _ bytes: UnsafeBufferPointer<UInt8>,
        maxDepth: Int = 64,
        _ body: (_ key: Value, _ value: Value) throws(Error) -> Void
    ) throws(Error) {
        var scanner = JSONScanner(bytes, maxDepth: maxDepth)
        scanner.skipSpace()
        guard scanner.peek == UInt8(ascii: "{") else {
            throw scanner.error(scanner.index == bytes.count ? "empty input" : "not a JSON object")
        }
        scanner.index += 1
        scanner.skipSpace()
        if scanner.peek == UInt8(ascii: "}") {
            scanner.index += 1
        } else {
            while true {
                scanner.skipSpace()
                guard scanner.peek == UInt8(ascii: "\"") else { throw scanner.error("expected a string key") }
                let keyStart = scanner.index
                try scanner.string()
                let key = Value(kind: .string, range: keyStart..<scanner.index)
                scanner.skipSpace()
                try scanner.expect(UInt8(ascii: ":"), "expected ':' after an object key")
                scanner.skipSpace()
                let value = try scanner.value(depth: 1)
                try body(key, value)
                scanner.skipSpace()
                if scanner.peek == UInt8(ascii: ",") {
                    scanner.index += 1
                    continue
                }
                try scanner.expect(UInt8(ascii: "}"), "expected ',' or '}' in an object")
                break
            }
        }
        scanner.skipSpace()
        guard scanner.index == bytes.count else { throw scanner.error("trailing bytes after the JSON object") }
    }

    /// The string and integer members of a top-level object (APNs' error bodies, JWT parts);
    /// other members are ignored, and anything that is not a valid JSON object yields none.
    public static func stringAndIntegerFields(_ bytes: [UInt8]) -> (strings: [String: String], integers: [String: Int64]) {
        bytes.withUnsafeBufferPointer { buffer in
            var strings: [String: String] = [:]
            var integers: [String: Int64] = [:]
            guard let members = try? members(buffer) else { return (strings, integers) }
            for (key, value) in members {
                switch value.kind {
                case .string: strings[key] = try? string(buffer, value)
                case .number: integers[key] = integer(buffer, value)
                default: break
                }
            }
            return (strings, integers)
        }
    }

    /// The elements of an array value already validated by `validate` or `members`.
    public static func elements(_ bytes: UnsafeBufferPointer<UInt8>, of array: Value) throws(Error) -> [Value] {
        var result: [Value] = []
        try forEachElement(bytes, of: array) { _, value in result.append(value) }
        return result
    }

    /// `elements` without the array: each element with its index, in order, to `body`; returns
    /// how many there are.
    @discardableResult
    public static func forEachElement(
        _ bytes: UnsafeBufferPointer<UInt8>,
        of array: Value,
        _ body: (Int, Value) -> Void
    ) throws(Error) -> Int {
        precondition(array.kind == .array)
        let slice = UnsafeBufferPointer(rebasing: bytes[array.range])
        var scanner = JSONScanner(slice, maxDepth: Int.max)
        scanner.index = 1
        var count = 0
        scanner.skipSpace()
        if scanner.peek == UInt8(ascii: "]") { return count }
        while true {
            scanner.skipSpace()
            var value = try scanner.value(depth: 0)
            value.range = (value.range.lowerBound + array.range.lowerBound)..<(value.range.upperBound + array.range.lowerBound)
            body(count, value)
            count += 1
            scanner.skipSpace()
            if scanner.peek == UInt8(ascii: ",") {
                scanner.index += 1
                continue
            }
            try scanner.expect(UInt8(ascii: "]"), "expected ',' or ']' in an array")
            return count
        }
    }

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

    // MARK: Grammar

    private var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

    private func error(_ message: String) -> Error {
        Error(message: message, offset: index)
    }

    private mutating func expect(_ byte: UInt8, _ message: String) throws(Error) {
        guard peek == byte else { throw error(peek == nil ? "unexpected end of input" : message) }
        index += 1
    }

    private mutating func skipSpace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    private mutating func value(depth: Int) throws(Error) -> Value {
        let start = index
        guard let byte = peek else { throw error("unexpected end of input") }
        let kind: Kind
        switch byte {
        case UInt8(ascii: "{"):
            kind = .object
            try object(depth: depth + 1)
        case UInt8(ascii: "["):
            kind = .array
            try array(depth: depth + 1)
        case UInt8(ascii: "\""):
            kind = .string
            try string()
        case UInt8(ascii: "t"):
            kind = .bool
            try literal("true")
        case UInt8(ascii: "f"):
            kind = .bool
            try literal("false")
        case UInt8(ascii: "n"):
            kind = .null
            try literal("null")
        case UInt8(ascii: "-"), 0x30...0x39:
            kind = .number
            try number()
        default:
            throw error("unexpected character")
        }
        return Value(kind: kind, range: start..<index)
    }

    private mutating func object(depth: Int) throws(Error) {
        guard depth <= maxDepth else { throw error("nesting deeper than \(maxDepth)") }
        index += 1
        skipSpace()
        if peek == UInt8(ascii: "}") {
            index += 1
            return
        }
        while true {
            skipSpace()
            guard peek == UInt8(ascii: "\"") else { throw error("expected a string key") }
            try string()
            skipSpace()
            try expect(UInt8(ascii: ":"), "expected ':' after an object key")
            skipSpace()
            _ = try value(depth: depth)
            skipSpace()
            if peek == UInt8(ascii: ",") {
                index += 1
                continue
            }
            try expect(UInt8(ascii: "}"), "expected ',' or '}' in an object")
            return
        }
    }

    private mutating func array(depth: Int) throws(Error) {
        guard depth <= maxDepth else { throw error("nesting deeper than \(maxDepth)") }
        index += 1
        skipSpace()
        if peek == UInt8(ascii: "]") {
            index += 1
            return
        }
        while true {
            skipSpace()
            _ = try value(depth: depth)
            skipSpace()
            if peek == UInt8(ascii: ",") {
                index += 1
                continue
            }
            try expect(UInt8(ascii: "]"), "expected ',' or ']' in an array")
            return
        }
    }

    private mutating func literal(_ word: StaticString) throws(Error) {
        let count = word.utf8CodeUnitCount
        guard index + count <= bytes.count else { throw error("unexpected end of input") }
        let matches = word.withUTF8Buffer { expected in
            (0..<count).allSatisfy { bytes[index + $0] == expected[$0] }
        }
        guard matches else { throw error("invalid literal") }
        index += count
    }

    private mutating func number() throws(Error) {
        if peek == UInt8(ascii: "-") { index += 1 }
        guard let first = peek, first >= 0x30 && first <= 0x39 else { throw error("invalid number") }
        index += 1
        if first != 0x30 {
            while let byte = peek, byte >= 0x30 && byte <= 0x39 { index += 1 }
        }
        if peek == UInt8(ascii: ".") {
            index += 1
            guard let byte = peek, byte >= 0x30 && byte <= 0x39 else { throw error("invalid number fraction") }
            while let byte = peek, byte >= 0x30 && byte <= 0x39 { index += 1 }
        }
        if peek == UInt8(ascii: "e") || peek == UInt8(ascii: "E") {
            index += 1
            if peek == UInt8(ascii: "+") || peek == UInt8(ascii: "-") { index += 1 }
            guard let byte = peek, byte >= 0x30 && byte <= 0x39 else { throw error("invalid number exponent") }
            while let byte = peek, byte >= 0x30 && byte <= 0x39 { index += 1 }
        }
    }

    /// A string: control characters refused, escapes checked, UTF-8 validated.
    private mutating func string() throws(Error) {
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
