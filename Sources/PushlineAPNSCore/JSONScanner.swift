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

    let bytes: UnsafeBufferPointer<UInt8>
    private let maxDepth: Int
    var index = 0

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

    // MARK: Grammar

    var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

    func error(_ message: String) -> Error {
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
}
