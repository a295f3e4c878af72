import Testing

@testable import PushlineAPNSCore

@Suite struct JSONScannerTests {
    func validate(_ text: String) -> Bool {
        validate(Array(text.utf8))
    }

    func validate(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBufferPointer { (try? JSONScanner.validate($0)) != nil }
    }

    @Test func acceptsValidJSON() {
        for text in [
            "{}", "[]", "0", "-0.5e+10", "\"a\\u00e9\\n\"", "true", "null", " {\"a\": [1, 2.5, {\"b\": null}], \"c\": false} ",
            "\"é日本\"", "\"\\ud83d\\ude00\"", "[[[[]]]]",
        ] {
            #expect(validate(text), "\(text)")
        }
    }

    @Test func rejectsInvalidJSON() {
        for text in [
            "", "{", "}", "{\"a\"}", "{\"a\":}", "{a:1}", "[1,]", "01", "1.", "-", "tru", "\"abc", "\"\\x\"",
            "{\"a\":1,}", "[1 2]", "1 2", "\"\u{01}\"", "NaN", "{\"a\":1}x",
        ] {
            #expect(!validate(text), "\(text)")
        }
        #expect(!validate([0x22, 0xC3, 0x28, 0x22]))  // bad continuation
        #expect(!validate([0x22, 0xC0, 0xAF, 0x22]))  // overlong
        #expect(!validate([0x22, 0xED, 0xA0, 0x80, 0x22]))  // surrogate
        #expect(!validate([0x22, 0xF4, 0x90, 0x80, 0x80, 0x22]))  // above U+10FFFF
    }

    /// Strings are skipped eight bytes at a time while they are plain ASCII: a special byte at any
    /// offset of a word (and in the tail after the last whole word) must still be seen.
    @Test func specialBytesAreSeenAtEveryOffset() {
        for length in 0..<40 {
            for position in 0..<max(length, 1) {
                var body = [UInt8](repeating: UInt8(ascii: "a"), count: length)
                #expect(validate([0x22] + body + [0x22]))
                guard length > 0 else { continue }
                body[position] = 0x01  // control character
                #expect(!validate([0x22] + body + [0x22]), "control at \(position) of \(length)")
                body[position] = 0x22  // an early quote ends the string: what follows is junk
                #expect(!validate([0x22] + body + [0x22]), "quote at \(position) of \(length)")
                body[position] = 0x5C  // a lone backslash escapes the closing quote or a letter
                #expect(!validate([0x22] + body + [0x22]), "backslash at \(position) of \(length)")
                body[position] = 0xFF  // never valid UTF-8
                #expect(!validate([0x22] + body + [0x22]), "0xFF at \(position) of \(length)")
                body[position] = 0xC3
                var accented = body
                accented.insert(0xA9, at: position + 1)  // é
                #expect(validate([0x22] + accented + [0x22]), "é at \(position) of \(length)")
                #expect(!validate([0x22] + body + [0x22]), "lone lead byte at \(position) of \(length)")
            }
        }
    }

    @Test func depthIsBounded() {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect(!validate(deep))
        let ok = String(repeating: "[", count: 60) + String(repeating: "]", count: 60)
        #expect(validate(ok))
    }

    @Test func membersGiveRawValueBytes() throws {
        let text = #"{"id":"j\"1","tokens":["aa","bb"],"payload":{"aps":{"alert":"\/hi"},"n":1.50},"priority":5}"#
        let bytes = Array(text.utf8)
        try bytes.withUnsafeBufferPointer { buffer in
            let members = try JSONScanner.members(buffer)
            #expect(members.map(\.key) == ["id", "tokens", "payload", "priority"])
            #expect(try JSONScanner.string(buffer, members[0].value) == "j\"1")
            let tokens = try JSONScanner.elements(buffer, of: members[1].value)
            #expect(try tokens.map { try JSONScanner.string(buffer, $0) } == ["aa", "bb"])
            let payload = String(decoding: buffer[members[2].value.range], as: UTF8.self)
            #expect(payload == #"{"aps":{"alert":"\/hi"},"n":1.50}"#)
            #expect(JSONScanner.integer(buffer, members[3].value) == 5)
        }
        #expect(throws: JSONScanner.Error.self) {
            try Array("[1]".utf8).withUnsafeBufferPointer { _ = try JSONScanner.members($0) }
        }
    }

    /// A top-level key must open with a quote, as a nested one must: `{id":1}` is not JSON (it
    /// once read as a key `d`).
    @Test func topLevelKeysNeedTheirOpeningQuote() {
        for text in [#"{id":1}"#, #"{"a":1,b":2}"#, "{1:2}"] {
            #expect(throws: JSONScanner.Error.self, "\(text)") {
                try Array(text.utf8).withUnsafeBufferPointer { _ = try JSONScanner.members($0) }
            }
        }
    }

    /// `forEachMemberKey` hands each key as written (quotes and escapes kept) with its value.
    @Test func memberKeysComeAsWritten() throws {
        let bytes = Array(#"{"id":1,"\u0069d":2}"#.utf8)
        var keys: [String] = []
        try bytes.withUnsafeBufferPointer { buffer in
            try JSONScanner.forEachMemberKey(buffer) { key, _ in
                keys.append(String(decoding: buffer[key.range], as: UTF8.self))
            }
        }
        #expect(keys == [#""id""#, #""\u0069d""#])
    }
}
