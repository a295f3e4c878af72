import Foundation
import PushlineAPNSCore
import Testing

@testable import PushlineWorker

/// `Personalisation.render` on jobs the decoder made: values JSON-escaped (none can leave its
/// string), defaults, null and missing variables, the size limit per rendered payload; then a
/// seeded differential test against an independent model, every rendered payload parsed by
/// Foundation.
@Suite struct PersonalisedRenderTests {
    static let decoder = JobDecoder(bundleIDs: ["default": "com.example.app"])

    static func token(_ n: Int) -> String {
        let digits = String(n, radix: 16)
        return String(repeating: "a", count: 64 - digits.count) + digits
    }

    /// A job of one object token per `vars` (nil: a plain string token) with `payload`.
    static func job(_ payload: String, vars: [String?]) throws -> Job {
        let entries = vars.enumerated().map { index, vars in
            vars.map { #"{"token":"\#(token(index))","vars":\#($0)}"# } ?? "\"\(token(index))\""
        }
        let json = #"{"id":"r","tokens":[\#(entries.joined(separator: ","))],"payload":\#(payload)}"#
        return try decoder.decode(Array(json.utf8)).get()
    }

    static func alert(_ payload: [UInt8]) throws -> String? {
        let object = try JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any]
        return (object?["aps"] as? [String: Any])?["alert"] as? String
    }

    @Test func valuesAreInsertedEscapedSoNoneLeavesItsString() throws {
        let payload = #"{"aps":{"alert":"<{{v}}>"}}"#
        let cases: [(vars: String, alert: String)] = [
            (#"{"v":"say \"hi\""}"#, #"<say "hi">"#),
            (#"{"v":"back\\slash \\\" end\\"}"#, #"<back\slash \" end\>"#),
            (#"{"v":"\n\t\r\b\f\u0000\u001f"}"#, "<\n\t\r\u{08}\u{0C}\u{00}\u{1F}>"),
            (#"{"v":"é 日本 😀 \u00e9 \ud83d\ude00"}"#, "<é 日本 😀 é 😀>"),
            (#"{"v":"\"}},\"x\":{\"y\":\""}"#, #"<"}},"x":{"y":">"#),
            (#"{"v":"{{v}} {{w|x}}"}"#, "<{{v}} {{w|x}}>"),
            (#"{"v":-1.25e+3}"#, "<-1.25e+3>"),
            (#"{"v":0}"#, "<0>"),
            (#"{"v":false}"#, "<false>"),
        ]
        let job = try Self.job(payload, vars: cases.map(\.vars))
        let rendered = try #require(job.personalisation).render(limit: 4096)
        #expect(rendered.missing.isEmpty && rendered.tooLarge.isEmpty && rendered.payloads.count == cases.count)
        for (index, expected) in cases.enumerated() {
            let bytes = rendered.payloads.payload(at: index)
            let object = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any], "\(index)")
            #expect(object.keys.sorted() == ["aps"], "\(index): nothing leaked out of the string")
            #expect(try Self.alert(bytes) == expected.alert, "\(index)")
        }
    }

    @Test func defaultsNullAndMissingVariables() throws {
        let payload = #"{"aps":{"alert":"{{a|A \"default\"}}/{{b}}/{{a}}"}}"#
        let job = try Self.job(payload, vars: [#"{"a":"x","b":"y"}"#, #"{"b":"y"}"#, #"{"a":null,"b":1}"#, #"{"a":"x"}"#, nil, "null"])
        let rendered = try #require(job.personalisation).render(limit: 4096)
        // 1: {{a}} has no default; 3 and 4: {{b}} has none; 5: no vars at all (null is none).
        #expect(rendered.missing == [1, 2, 3, 4, 5])
        #expect(rendered.payloads.count == 1)
        #expect(try Self.alert(rendered.payloads.payload(at: 0)) == "x/y/x")
        let withDefaults = try Self.job(#"{"aps":{"alert":"{{a|A \"d\"}}/{{b|}}"}}"#, vars: [#"{"a":null}"#, nil])
        let all = try #require(withDefaults.personalisation).render(limit: 4096)
        #expect(all.missing.isEmpty)
        #expect(try (0..<2).map { try Self.alert(all.payloads.payload(at: $0)) } == [#"A "d"/"#, #"A "d"/"#])
    }

    @Test func theLimitAppliesToEachRenderedPayload() throws {
        let payload = #"{"aps":{"alert":"{{v}}"}}"#
        let fixed = payload.utf8.count - "{{v}}".utf8.count
        let atLimit = String(repeating: "x", count: 100 - fixed)
        let job = try Self.job(
            payload,
            vars: [#"{"v":"\#(atLimit)"}"#, #"{"v":"\#(atLimit)x"}"#, #"{"v":"s"}"#, #"{"v":"\#(atLimit)\n"}"#]
        )
        let rendered = try #require(job.personalisation).render(limit: 100)
        #expect(rendered.tooLarge == [1, 3], "an escape counts as the bytes it takes")
        #expect(rendered.payloads.count == 2 && rendered.payloads.payload(at: 0).count == 100)
        #expect(rendered.runs.map(\.tokens) == [0..<1, 2..<3])
        #expect(rendered.runs.map(\.firstPayload) == [0, 1])
    }

    // MARK: Differential

    /// A piece of a string value in the model: literal text, or a placeholder.
    enum Piece {
        case text(String)
        case slot(name: String, fallback: String?)
    }

    /// A variable's value in the model, and its text once inserted.
    enum Value {
        case string(String)
        case number(String)
        case bool(Bool)
        case null

        var text: String? {
            switch self {
            case .string(let text), .number(let text): text
            case .bool(let value): value ? "true" : "false"
            case .null: nil
            }
        }
    }

    struct Model {
        var random: SplitMix64
        static let names = ["name", "count", "a_1", "X"]
        static let alphabet: [Character] = Array("aZ 09{}|\"\\/\n\t\u{01}\u{1F}é日😀.-:,[]") + ["{", "{", "}", "}"]

        mutating func int(_ bound: Int) -> Int { Int(random.next() % UInt64(bound)) }
        mutating func chance(_ percent: Int) -> Bool { int(100) < percent }

        mutating func text(max: Int) -> String {
            String((0..<int(max + 1)).map { _ in Self.alphabet[int(Self.alphabet.count)] })
        }

        /// `text` as JSON string content, each character escaped or not at random (those that must
        /// be, always); a `{` next to another `{` and, in a default (`inDefault`), a `}` next to a
        /// `}` or at its end are escaped so that they stay literal.
        mutating func escaped(_ text: String, inDefault: Bool, before: Character?) -> String {
            let characters = Array(text)
            var out = ""
            var previous = before
            for (index, character) in characters.enumerated() {
                let next = index + 1 < characters.count ? characters[index + 1] : nil
                let mustEscape: Bool
                switch character {
                case "\"", "\\": mustEscape = true
                case "{": mustEscape = previous == "{" || next == "{" || next == nil
                case "}": mustEscape = inDefault && (next == "}" || next == nil)
                default: mustEscape = character.unicodeScalars.first!.value < 0x20
                }
                if mustEscape || chance(15) {
                    out += Self.escape(character, short: chance(50))
                    previous = nil
                } else {
                    out.append(character)
                    previous = character
                }
            }
            return out
        }

        static func escape(_ character: Character, short: Bool) -> String {
            if short {
                switch character {
                case "\"": return "\\\""
                case "\\": return "\\\\"
                case "\n": return "\\n"
                case "\t": return "\\t"
                default: break
                }
            }
            return String(character).utf16.map { unit in
                let hex = String(unit, radix: 16)
                return "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            }.joined()
        }

        mutating func pieces() -> [Piece] {
            (0..<int(5)).map { _ in
                if chance(55) { return .text(text(max: 6)) }
                let name = Self.names[int(Self.names.count)]
                return .slot(name: name, fallback: chance(40) ? text(max: 5) : nil)
            }
        }

        /// A string value's JSON text from its pieces.
        mutating func json(_ pieces: [Piece]) -> String {
            var out = "\""
            for (index, piece) in pieces.enumerated() {
                switch piece {
                case .text(let text):
                    // A literal `{` just before a placeholder is escaped (`escaped` sees none after it).
                    let followed = index + 1 < pieces.count
                    out += escaped(text, inDefault: false, before: out.last).replacingLastBrace(followed)
                case .slot(let name, let fallback):
                    let spaces = chance(20) ? " " : ""
                    out += "{{" + spaces + name + spaces
                    if let fallback { out += "|" + escaped(fallback, inDefault: true, before: "|") }
                    out += "}}"
                }
            }
            return out + "\""
        }

        mutating func value() -> Value {
            switch int(10) {
            case 0: return .null
            case 1: return .bool(chance(50))
            case 2, 3: return .number(["0", "-12", "3.25", "1e9", "-0.5E-2", "42"][int(6)])
            default: return .string(text(max: 12))
            }
        }
    }

    /// 100,000 rendered payloads in all, in four parts of 25,000 that run side by side.
    @Test(arguments: 0..<4) func renderedPayloadsEqualAnIndependentModelOverASeededRandomSample(part: Int) throws {
        let seed = UInt64.random(in: 0..<UInt64.max)
        var model = Model(random: SplitMix64(seed: seed))
        var checked = 0
        var missingSeen = 0
        var tooLargeSeen = 0
        var job = 0
        while checked < 25_000 {
            job += 1
            // The payload: a few string values built from pieces, a key that looks like a template,
            // a number and an array.
            let title = model.pieces()
            let body = model.pieces()
            let listed = model.pieces()
            let pad = model.chance(15) ? String(repeating: "p", count: 3000) : ""
            let titleJSON = model.json(title)
            let bodyJSON = model.json(body)
            let listedJSON = model.json(listed)
            let payload =
                #"{"aps":{"alert":{"title":\#(titleJSON),"body":\#(bodyJSON)}},"k{{name}}":[\#(listedJSON),7],"pad":"\#(pad)"}"#
            let tokens = 1 + model.int(100)
            var vars: [[String: Value]] = []
            var entries: [String] = []
            for index in 0..<tokens {
                var own: [String: Value] = [:]
                var members: [String] = []
                // Now and then a value as long as a token's vars may take, alone.
                let long = model.chance(3)
                if long {
                    own["name"] = .string(String(repeating: "W", count: 1000))
                    members.append(#""name":"\#(String(repeating: "W", count: 1000))""#)
                }
                for name in Model.names where !long && model.chance(70) {
                    let value = model.value()
                    own[name] = value
                    let text: String
                    switch value {
                    case .string(let string): text = "\"" + model.escaped(string, inDefault: false, before: nil) + "\""
                    case .number(let number): text = number
                    case .bool(let bool): text = bool ? "true" : "false"
                    case .null: text = "null"
                    }
                    members.append("\"\(name)\":\(text)")
                }
                vars.append(own)
                entries.append(#"{"token":"\#(Self.token(index))","vars":{\#(members.joined(separator: ","))}}"#)
            }
            let record = #"{"id":"d\#(job)","tokens":[\#(entries.joined(separator: ","))],"payload":\#(payload)}"#
            let decoded: Job
            switch Self.decoder.decode(Array(record.utf8)) {
            case .success(let made): decoded = made
            case .failure(let rejection) where rejection.code == .payloadTooLarge:
                // The template itself (as written) is over the limit: no token to render.
                continue
            case .failure(let rejection):
                Issue.record("seed \(seed), job \(job): rejected \(rejection): \(record)")
                return
            }
            let hasSlots = (title + body + listed).contains { if case .slot = $0 { true } else { false } }
            guard let personalisation = decoded.personalisation else {
                #expect(!hasSlots, "seed \(seed), job \(job): no template for \(payload)")
                continue
            }
            let rendered = personalisation.render(limit: 4096)
            let unlimited = personalisation.render(limit: .max)
            var payloadIndex = 0
            for token in 0..<tokens {
                func expand(_ pieces: [Piece]) -> String? {
                    var out = ""
                    for piece in pieces {
                        switch piece {
                        case .text(let text): out += text
                        case .slot(let name, let fallback):
                            guard let value = vars[token][name]?.text ?? fallback else { return nil }
                            out += value
                        }
                    }
                    return out
                }
                guard let expectedTitle = expand(title), let expectedBody = expand(body), let expectedListed = expand(listed) else {
                    #expect(rendered.missing.contains(token), "seed \(seed), job \(job), token \(token): a variable is missing")
                    missingSeen += 1
                    continue
                }
                let unlimitedIndex = token - unlimited.missing.filter { $0 < token }.count
                let full = unlimited.payloads.payload(at: unlimitedIndex)
                if full.count > 4096 {
                    #expect(rendered.tooLarge.contains(token), "seed \(seed), job \(job), token \(token): \(full.count) bytes")
                    tooLargeSeen += 1
                    continue
                }
                let bytes = rendered.payloads.payload(at: payloadIndex)
                payloadIndex += 1
                #expect(bytes == full)
                guard let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? NSDictionary else {
                    Issue.record("seed \(seed), job \(job), token \(token): not JSON: \(String(decoding: bytes, as: UTF8.self))")
                    return
                }
                let expected: NSDictionary = [
                    "aps": ["alert": ["title": expectedTitle, "body": expectedBody]],
                    "k{{name}}": [expectedListed, 7],
                    "pad": pad,
                ]
                if object != expected {
                    Issue.record(
                        "seed \(seed), job \(job), token \(token): \(String(decoding: bytes, as: UTF8.self)) is not \(expected)"
                    )
                    return
                }
                checked += 1
            }
            #expect(payloadIndex == rendered.payloads.count, "seed \(seed), job \(job)")
        }
        #expect(missingSeen > 0 && tooLargeSeen > 0, "seed \(seed): the sample has both kinds of unrenderable token")
    }
}

extension String {
    /// This escaped text with a trailing raw `{` escaped when a placeholder follows.
    fileprivate func replacingLastBrace(_ followed: Bool) -> String {
        guard followed, hasSuffix("{") else { return self }
        return String(dropLast()) + "\\u007b"
    }
}
