import Foundation

/// One Swift file of the repository, read as tokens of its code: comments and the contents of
/// string literals are left out, so a declaration or an attribute that prose merely mentions is
/// never counted. Enough to find type declarations, their bodies and attributes by pattern, not a
/// parser: `ArchitectureDocTests` holds docs/architecture.md to what these find.
struct SwiftSourceFile {
    /// A word (`[A-Za-z_][A-Za-z0-9_]*`) or one punctuation character of the code, at its UTF-8 offset.
    struct Token {
        var text: String
        var offset: Int
    }

    /// A class, struct, enum, actor or protocol declared in the file (nested ones too), with the
    /// UTF-8 offsets of its body's braces.
    struct TypeDeclaration {
        var name: String
        var body: ClosedRange<Int>
    }

    /// Relative to the repository root, e.g. `Sources/PushlineTLS/TLSHandler.swift`.
    let path: String
    let tokens: [Token]
    let types: [TypeDeclaration]

    init(path: String, text: String) {
        self.path = path
        tokens = Self.tokens(of: Self.blankingCommentsAndStrings(Array(text.utf8)))
        types = Self.typeDeclarations(in: tokens)
    }

    /// Every `.swift` file under `directory` (relative to `root`), sorted by path.
    static func all(under directory: String, root: URL) throws -> [SwiftSourceFile] {
        try paths(under: directory, root: root).map { path in
            SwiftSourceFile(path: path, text: try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8))
        }
    }

    /// The paths of the `.swift` files under `directory` (relative to `root`), relative to `root`, sorted.
    static func paths(under directory: String, root: URL) -> [String] {
        let base = root.appendingPathComponent(directory)
        guard let walker = FileManager.default.enumerator(at: base, includingPropertiesForKeys: nil) else { return [] }
        let prefix = root.standardizedFileURL.path + "/"
        var paths: [String] = []
        for case let url as URL in walker where url.pathExtension == "swift" {
            paths.append(String(url.standardizedFileURL.path.dropFirst(prefix.count)))
        }
        return paths.sorted()
    }

    /// The offsets of each run of tokens that spells `words` (e.g. `@ exclusivity ( unchecked )`).
    func occurrences(of words: [String]) -> [Int] {
        guard !words.isEmpty, tokens.count >= words.count else { return [] }
        return (0...(tokens.count - words.count)).filter { spells(words, at: $0) }.map { tokens[$0].offset }
    }

    /// The innermost type whose body holds `offset`; nil at the top level.
    func innermostType(at offset: Int) -> TypeDeclaration? {
        types.filter { $0.body.contains(offset) }.min { $0.body.count < $1.body.count }
    }

    /// Whether the file declares a type `name`, or extends one whose last component is `name`.
    func declaresOrExtends(_ name: String) -> Bool {
        if types.contains(where: { $0.name == name }) { return true }
        for index in tokens.indices where tokens[index].text == "extension" {
            var next = index + 1
            var last: String?
            while next < tokens.count, Self.isWord(tokens[next].text) {
                last = tokens[next].text
                guard next + 1 < tokens.count, tokens[next + 1].text == "." else { break }
                next += 2
            }
            if last == name { return true }
        }
        return false
    }

    /// Whether a `func`, `var`, `let` or `case` named `name` is declared in the file.
    func declaresMember(_ name: String) -> Bool {
        let introducers: Set<String> = ["func", "var", "let", "case"]
        return tokens.indices.dropFirst().contains { tokens[$0].text == name && introducers.contains(tokens[$0 - 1].text) }
    }

    /// Whether the tokens from `index` on spell `words`.
    func spells(_ words: [String], at index: Int) -> Bool {
        index >= 0 && index + words.count <= tokens.count && words.indices.allSatisfy { tokens[index + $0].text == words[$0] }
    }

    /// The token indices of the first `func name`: from `func` to the body's `{`, and the body
    /// from that `{` to its `}`.
    func function(_ name: String) -> (signature: Range<Int>, body: ClosedRange<Int>)? {
        guard let start = tokens.indices.first(where: { spells(["func", name], at: $0) }),
            let open = tokens[start...].firstIndex(where: { $0.text == "{" })
        else { return nil }
        var depth = 0
        for close in open..<tokens.count {
            if tokens[close].text == "{" { depth += 1 }
            if tokens[close].text == "}" { depth -= 1 }
            if depth == 0 { return (start..<open, open...close) }
        }
        return nil
    }

    // MARK: Reading

    static func isWord(_ text: String) -> Bool {
        guard let first = text.utf8.first else { return false }
        return first == UInt8(ascii: "_") || (first | 0x20 >= UInt8(ascii: "a") && first | 0x20 <= UInt8(ascii: "z"))
    }

    private static func typeDeclarations(in tokens: [Token]) -> [TypeDeclaration] {
        let keywords: Set<String> = ["class", "struct", "enum", "actor", "protocol"]
        // `class func`, `class var` and the like declare members, not types.
        let notNames: Set<String> = ["func", "var", "let", "subscript", "init", "deinit", "override", "final", "static"]
        var found: [TypeDeclaration] = []
        for index in tokens.indices.dropLast() where keywords.contains(tokens[index].text) {
            let name = tokens[index + 1].text
            guard isWord(name), !notNames.contains(name) else { continue }
            guard let open = tokens[(index + 2)...].firstIndex(where: { $0.text == "{" }) else { continue }
            var depth = 0
            for close in open..<tokens.count {
                if tokens[close].text == "{" { depth += 1 }
                if tokens[close].text == "}" { depth -= 1 }
                if depth == 0 {
                    found.append(TypeDeclaration(name: name, body: tokens[open].offset...tokens[close].offset))
                    break
                }
            }
        }
        return found
    }

    private static func tokens(of code: [UInt8]) -> [Token] {
        func isWordByte(_ byte: UInt8) -> Bool {
            byte == UInt8(ascii: "_") || (byte | 0x20 >= UInt8(ascii: "a") && byte | 0x20 <= UInt8(ascii: "z"))
                || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
        }
        var tokens: [Token] = []
        var index = 0
        while index < code.count {
            let byte = code[index]
            if isWordByte(byte) {
                let start = index
                while index < code.count, isWordByte(code[index]) { index += 1 }
                tokens.append(Token(text: String(decoding: code[start..<index], as: UTF8.self), offset: start))
            } else {
                if byte > 0x20, byte < 0x80 { tokens.append(Token(text: String(UnicodeScalar(byte)), offset: index)) }
                index += 1
            }
        }
        return tokens
    }

    /// `code` with every comment (`//`, nested `/* */`) and the contents of every string literal
    /// (plain, multi-line, raw `#"…"#`; an interpolation's code is kept) replaced by spaces, line
    /// breaks kept, so offsets still match the file's.
    static func blankingCommentsAndStrings(_ code: [UInt8]) -> [UInt8] {
        enum Context {
            case string(hashes: Int, multiline: Bool)
            case interpolation(depth: Int)
        }
        let (quote, hash, backslash) = (UInt8(ascii: "\""), UInt8(ascii: "#"), UInt8(ascii: "\\"))
        let (slash, star) = (UInt8(ascii: "/"), UInt8(ascii: "*"))
        var bytes = code
        var stack: [Context] = []
        var index = 0
        func at(_ offset: Int) -> UInt8? { offset < bytes.count ? bytes[offset] : nil }
        func hashes(from offset: Int, count: Int) -> Bool { (0..<count).allSatisfy { at(offset + $0) == hash } }
        func blank(_ range: Range<Int>) {
            for offset in range where offset < bytes.count && bytes[offset] != UInt8(ascii: "\n") { bytes[offset] = UInt8(ascii: " ") }
        }
        while index < bytes.count {
            let byte = bytes[index]
            if case .string(let count, let multiline)? = stack.last {
                let delimiter = multiline ? 3 : 1
                if (0..<delimiter).allSatisfy({ at(index + $0) == quote }), hashes(from: index + delimiter, count: count) {
                    stack.removeLast()
                    index += delimiter + count
                } else if byte == backslash, hashes(from: index + 1, count: count) {
                    if at(index + 1 + count) == UInt8(ascii: "(") {
                        stack.append(.interpolation(depth: 0))
                        index += 2 + count
                    } else {
                        blank(index..<(index + 2 + count))
                        index += 2 + count
                    }
                } else {
                    blank(index..<(index + 1))
                    index += 1
                }
                continue
            }
            if byte == slash, at(index + 1) == slash {
                let end = bytes[index...].firstIndex(of: UInt8(ascii: "\n")) ?? bytes.count
                blank(index..<end)
                index = end
            } else if byte == slash, at(index + 1) == star {
                var depth = 0
                var end = index
                repeat {
                    if at(end) == slash, at(end + 1) == star {
                        depth += 1
                        end += 2
                    } else if at(end) == star, at(end + 1) == slash {
                        depth -= 1
                        end += 2
                    } else {
                        end += 1
                    }
                } while depth > 0 && end < bytes.count
                blank(index..<end)
                index = end
            } else if byte == quote || (byte == hash && bytes[index...].first(where: { $0 != hash }) == quote) {
                var count = 0
                while at(index + count) == hash { count += 1 }
                let multiline = at(index + count + 1) == quote && at(index + count + 2) == quote
                stack.append(.string(hashes: count, multiline: multiline))
                index += count + (multiline ? 3 : 1)
            } else if case .interpolation(let depth)? = stack.last, byte == UInt8(ascii: "(") || byte == UInt8(ascii: ")") {
                stack.removeLast()
                if byte == UInt8(ascii: "(") {
                    stack.append(.interpolation(depth: depth + 1))
                } else if depth > 0 {
                    stack.append(.interpolation(depth: depth - 1))
                }
                index += 1
            } else {
                index += 1
            }
        }
        return bytes
    }
}
