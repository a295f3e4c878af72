/// A personalised job's payload as a template: the payload's bytes as written, and where its
/// placeholders are, parsed once per job (`parse`) so that each token's payload is made by
/// copying literal runs and values (`Personalisation.render`).
///
/// Syntax, inside JSON string values only (never keys; text outside strings cannot hold `{{`):
/// `{{name}}` or `{{name|default}}`. A name is 1...`maxNameBytes` bytes of `A-Z a-z 0-9 _`,
/// case-sensitive; spaces (U+0020) between `{{` and the name and between the name and `|` or
/// `}}` are ignored. The default is the bytes between the first `|` and the next `}}`, exactly
/// as the payload writes them (spaces and JSON escapes included: they are already escaped), and
/// may be empty; it may not hold `{{`, nor end the string. A placeholder never spans two
/// strings. The template is read on its raw JSON bytes, so a literal `{{` is written with an
/// escape, `\u007b{`, and a `}}` inside a default as `}\u007d`; a single `{` or a `}}` outside a
/// placeholder is literal.
struct PayloadTemplate: Sendable, Hashable {
    static let maxNameBytes = 64

    /// One placeholder: the bytes it spans in `source` (`{{` to `}}`), which name it reads (an
    /// index into `names`), and its default's bytes in `source`, if it has one.
    struct Slot: Sendable, Hashable {
        var start: Int32
        var end: Int32
        var name: Int32
        var fallbackStart: Int32
        /// -1: no default.
        var fallbackEnd: Int32

        var hasFallback: Bool { fallbackEnd >= 0 }
        var fallbackCount: Int { hasFallback ? Int(fallbackEnd - fallbackStart) : 0 }
    }

    /// Why a payload is not a template; `offset` is the byte of the payload where the placeholder
    /// starts.
    struct Problem: Error, Sendable, Hashable, CustomStringConvertible {
        var message: String
        var offset: Int
        var description: String { "placeholder at byte \(offset) of the payload: \(message)" }
    }

    /// The payload as written (the job's `payload`, shared).
    let source: [UInt8]
    /// The placeholders, in order.
    let slots: [Slot]
    /// The distinct names the placeholders read, in order of first use.
    let names: [[UInt8]]
    /// The bytes of `source` outside every placeholder: what every rendered payload has.
    let literalBytes: Int

    /// The template of `payload` (a JSON object the decoder validated); nil when it holds no
    /// placeholder. Throws `Problem` for a malformed one.
    static func parse(_ payload: [UInt8]) throws(Problem) -> PayloadTemplate? {
        var slots: [Slot] = []
        var names: [[UInt8]] = []
        try payload.withUnsafeBufferPointer { (bytes: UnsafeBufferPointer<UInt8>) throws(Problem) in
            // Containers open around the current position: bit d set = the container at depth d is
            // an object. The scanner bounds the record's nesting at 64, so the payload's fits.
            var objects: UInt64 = 0
            var depth = 0
            var expectingKey = false
            var index = 0
            while index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: "{"):
                    depth += 1
                    if depth < 64 { objects |= 1 << UInt64(depth) }
                    expectingKey = true
                    index += 1
                case UInt8(ascii: "["):
                    depth += 1
                    if depth < 64 { objects &= ~(1 << UInt64(depth)) }
                    expectingKey = false
                    index += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    depth -= 1
                    expectingKey = false
                    index += 1
                case UInt8(ascii: ","):
                    expectingKey = depth < 64 && objects & (1 << UInt64(depth)) != 0
                    index += 1
                case UInt8(ascii: ":"):
                    expectingKey = false
                    index += 1
                case UInt8(ascii: "\""):
                    index = try string(bytes, from: index, isKey: expectingKey, slots: &slots, names: &names)
                    expectingKey = false
                default:
                    index += 1
                }
            }
        }
        guard !slots.isEmpty else { return nil }
        let spanned = slots.reduce(0) { $0 + Int($1.end - $1.start) }
        return PayloadTemplate(source: payload, slots: slots, names: names, literalBytes: payload.count - spanned)
    }

    /// Skips the string opening at `start`, reading the placeholders of a value; returns the index
    /// after its closing quote.
    private static func string(
        _ bytes: UnsafeBufferPointer<UInt8>,
        from start: Int,
        isKey: Bool,
        slots: inout [Slot],
        names: inout [[UInt8]]
    ) throws(Problem) -> Int {
        var index = start + 1
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "\""):
                return index + 1
            case UInt8(ascii: "\\"):
                // The escaped byte (a `\u`'s four hex digits hold no quote or brace).
                index += 2
            case UInt8(ascii: "{") where !isKey && index + 1 < bytes.count && bytes[index + 1] == UInt8(ascii: "{"):
                let slot = try placeholder(bytes, at: index, names: &names)
                slots.append(slot)
                index = Int(slot.end)
            default:
                index += 1
            }
        }
        return index
    }

    private static func isNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "_"):
            true
        default: false
        }
    }

    /// Whether `name` is a variable name (also the rule for `vars` keys).
    static func isName(_ name: UnsafeBufferPointer<UInt8>) -> Bool {
        (1...maxNameBytes).contains(name.count) && name.allSatisfy(isNameByte)
    }

    /// The placeholder whose `{{` is at `start`.
    private static func placeholder(
        _ bytes: UnsafeBufferPointer<UInt8>,
        at start: Int,
        names: inout [[UInt8]]
    ) throws(Problem) -> Slot {
        func problem(_ message: String) -> Problem { Problem(message: message, offset: start) }
        var index = start + 2
        while index < bytes.count, bytes[index] == UInt8(ascii: " ") { index += 1 }
        let nameStart = index
        while index < bytes.count, isNameByte(bytes[index]) { index += 1 }
        let name = UnsafeBufferPointer(rebasing: bytes[nameStart..<index])
        guard !name.isEmpty else {
            let found = index < bytes.count ? describe(bytes[index]) : "the end"
            throw problem("expected a name (A-Z a-z 0-9 _) after '{{', found \(found)")
        }
        guard name.count <= maxNameBytes else { throw problem("the name is longer than \(maxNameBytes) bytes") }
        while index < bytes.count, bytes[index] == UInt8(ascii: " ") { index += 1 }
        var fallbackStart = -1
        var fallbackEnd = -1
        if index < bytes.count, bytes[index] == UInt8(ascii: "|") {
            index += 1
            fallbackStart = index
            while true {
                guard index < bytes.count, bytes[index] != UInt8(ascii: "\"") else {
                    throw problem("unterminated: no '}}' before the string ends")
                }
                if bytes[index] == UInt8(ascii: "\\") {
                    index += 2
                    continue
                }
                if bytes[index] == UInt8(ascii: "}"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "}") {
                    fallbackEnd = index
                    break
                }
                if bytes[index] == UInt8(ascii: "{"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "{") {
                    throw problem("'{{' inside a default (write it '\\u007b{')")
                }
                index += 1
            }
        } else {
            guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "}"), bytes[index + 1] == UInt8(ascii: "}") else {
                if index < bytes.count, bytes[index] == UInt8(ascii: "\"") {
                    throw problem("unterminated: no '}}' before the string ends")
                }
                let found = index < bytes.count ? describe(bytes[index]) : "the end"
                throw problem("expected '}}' or '|' after the name, found \(found)")
            }
        }
        let nameIndex: Int
        if let known = names.firstIndex(where: { $0.elementsEqual(name) }) {
            nameIndex = known
        } else {
            nameIndex = names.count
            names.append(Array(name))
        }
        return Slot(
            start: Int32(start),
            end: Int32(index + 2),
            name: Int32(nameIndex),
            fallbackStart: Int32(fallbackStart),
            fallbackEnd: Int32(fallbackEnd)
        )
    }

    private static func describe(_ byte: UInt8) -> String {
        (0x21...0x7E).contains(byte) ? "'\(Character(Unicode.Scalar(byte)))'" : "byte 0x\(String(byte, radix: 16))"
    }
}
