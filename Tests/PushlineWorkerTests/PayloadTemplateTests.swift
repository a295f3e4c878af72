import Testing

@testable import PushlineWorker

/// `PayloadTemplate.parse`: where a payload's placeholders are, and which payloads are malformed.
@Suite struct PayloadTemplateTests {
    static func parse(_ payload: String) throws -> PayloadTemplate? {
        try PayloadTemplate.parse(Array(payload.utf8))
    }

    static func problem(_ payload: String) -> String? {
        do {
            _ = try PayloadTemplate.parse(Array(payload.utf8))
            return nil
        } catch {
            return error.description
        }
    }

    /// Placeholder `i`'s name and default, as text.
    static func slots(_ template: PayloadTemplate) -> [String] {
        template.slots.map { slot in
            let name = String(decoding: template.names[Int(slot.name)], as: UTF8.self)
            guard slot.hasFallback else { return name }
            return name + "|" + String(decoding: template.source[Int(slot.fallbackStart)..<Int(slot.fallbackEnd)], as: UTF8.self)
        }
    }

    @Test func aPayloadWithoutPlaceholdersIsNoTemplate() throws {
        #expect(try Self.parse(#"{"aps":{"alert":"{ x } }} {"}}"#) == nil)
        #expect(try Self.parse(#"{"a":[1,{"b":"c"}]}"#) == nil)
    }

    @Test func placeholdersInStringValuesWithSpacesAndDefaults() throws {
        let template = try #require(
            try Self.parse(#"{"aps":{"alert":{"title":"Hi {{ name }}","body":"{{count|no}} new, {{name|th\"ere }}}"}},"x":["{{a_1|}}"]}"#)
        )
        #expect(Self.slots(template) == ["name", "count|no", "name|th\\\"ere ", "a_1|"])
        #expect(template.names.map { String(decoding: $0, as: UTF8.self) } == ["name", "count", "a_1"])
        let spanned = template.slots.reduce(0) { $0 + Int($1.end - $1.start) }
        #expect(template.literalBytes == template.source.count - spanned)
    }

    @Test func keysAndEscapedBracesAreLiteral() throws {
        #expect(try Self.parse(#"{"{{name}}":"x","y":"\u007b{name}}","z":"{\u007bname}}","w":"\\\"{x"}"#) == nil)
        // A key that looks like a placeholder, then a value that is one.
        let template = try #require(try Self.parse(#"{"{{a}}":{"{{b}}":"{{c}}"}}"#))
        #expect(Self.slots(template) == ["c"])
        // After an escaped backslash, `{{` is a placeholder.
        #expect(Self.slots(try #require(try Self.parse(#"{"a":"\\{{b}}"}"#))) == ["b"])
    }

    @Test func malformedPlaceholdersAreRefusedWithWhereAndWhy() {
        #expect(Self.problem(#"{"a":"Hi {{name"}"#)?.contains("byte 9") == true)
        #expect(Self.problem(#"{"a":"Hi {{name"}"#)?.contains("unterminated") == true)
        #expect(Self.problem(#"{"a":"{{name|x"}"#)?.contains("unterminated") == true)
        #expect(Self.problem(#"{"a":"{{}}"}"#)?.contains("expected a name") == true)
        #expect(Self.problem(#"{"a":"{{first name}}"}"#)?.contains("expected '}}' or '|' after the name, found 'n'") == true)
        #expect(Self.problem(#"{"a":"{{na-me}}"}"#) != nil)
        #expect(Self.problem(#"{"a":"{{{name}}}"}"#)?.contains("expected a name") == true)
        #expect(Self.problem(#"{"a":"{{a|{{b}}}}"}"#)?.contains("inside a default") == true)
        #expect(Self.problem(#"{"a":"{{\#(String(repeating: "n", count: 65))}}"}"#)?.contains("longer than 64") == true)
        #expect(Self.problem(#"{"a":"{{\#(String(repeating: "n", count: 64))}}"}"#) == nil)
        // A placeholder cannot close in the next string.
        #expect(Self.problem(#"{"a":"{{x","b":"}}"}"#)?.contains("unterminated") == true)
    }
}
