import PushlineAPNSCore
import Testing

@testable import PushlineWorker

/// `JobDecoder` on personalised jobs: `tokens` entries as objects with `vars`, mixed with plain
/// strings, their shapes checked, and the payload read as a template only for such a job.
@Suite struct PersonalisedJobDecoderTests {
    static let decoder = JobDecoder(bundleIDs: ["default": "com.example.app"])
    static let a = String(repeating: "a", count: 64)
    static let b = String(repeating: "b", count: 64)
    static let c = String(repeating: "c", count: 64)

    static func job(_ tokens: String, payload: String = #"{"aps":{"alert":"Hi {{name|there}}, {{count}}"}}"#) -> String {
        #"{"id":"p1","tokens":[\#(tokens)],"payload":\#(payload)}"#
    }

    static func decode(_ json: String) -> Result<Job, JobRejection> {
        decoder.decode(Array(json.utf8))
    }

    static func rejection(_ json: String) -> String? {
        guard case .failure(let rejection) = decode(json) else { return nil }
        return rejection.description
    }

    static func rendered(_ job: Job, limit: Int = 4096) throws -> [String] {
        let rendered = try #require(job.personalisation).render(limit: limit)
        return (0..<rendered.payloads.count).map { String(decoding: rendered.payloads.payload(at: $0), as: UTF8.self) }
    }

    @Test func objectTokensAndStringsMixAndEachKeepsItsOwnVariables() throws {
        let json = Self.job(
            #"{"token":"\#(Self.a)","vars":{"name":"Anna","count":3}},"\#(Self.b)",{"vars":{"count":true,"other":[1]}, "token":"\#(Self.c)"}"#
        )
        // Variables the template does not read are still checked: an array is refused.
        #expect(Self.rejection(json)?.contains("tokens[2].vars.other: an array") == true)
        let fine = Self.job(
            #"{"token":"\#(Self.a)","vars":{"name":"Anna","count":3}},"\#(Self.b)",{"vars":{"count":true,"other":"x"}, "token":"\#(Self.c)","user":7}"#
        )
        let job = try Self.decode(fine).get()
        #expect(job.tokens == [Self.a, Self.b, Self.c])
        let rendered = try #require(job.personalisation).render(limit: 4096)
        #expect(rendered.missing == [1])
        #expect(rendered.tooLarge.isEmpty)
        #expect(
            (0..<rendered.payloads.count).map { String(decoding: rendered.payloads.payload(at: $0), as: UTF8.self) } == [
                #"{"aps":{"alert":"Hi Anna, 3"}}"#, #"{"aps":{"alert":"Hi there, true"}}"#,
            ]
        )
    }

    @Test func aJobOfStringTokensIsPlainItsBracesIncluded() throws {
        let job = try Self.decode(Self.job(#""\#(Self.a)""#, payload: #"{"aps":{"alert":"{{ not | parsed"}}"#)).get()
        #expect(job.personalisation == nil)
        #expect(job.payload == Array(#"{"aps":{"alert":"{{ not | parsed"}}"#.utf8))
    }

    @Test func anObjectTokenWithAPayloadWithoutPlaceholdersIsPlain() throws {
        let job = try Self.decode(Self.job(#"{"token":"\#(Self.a)","vars":{"name":"A"}}"#, payload: #"{"aps":{"alert":"hi"}}"#)).get()
        #expect(job.personalisation == nil && job.tokens == [Self.a])
    }

    @Test func aMalformedTemplateRejectsTheJob() {
        let rejection = Self.rejection(Self.job(#"{"token":"\#(Self.a)"}"#, payload: #"{"aps":{"alert":"Hi {{name"}}"#))
        #expect(
            rejection?.hasPrefix("invalid_field: payload: placeholder at byte 20 of the payload: unterminated") == true,
            "\(rejection ?? "")"
        )
    }

    @Test func badShapesAreRefusedNamingTheEntry() {
        let cases: [(String, String)] = [
            ("7", "invalid_field: tokens[0]: not a string or an object"),
            (#"{"vars":{}}"#, "missing_field: tokens[0].token"),
            (#"{"token":7}"#, "invalid_field: tokens[0].token: not a string"),
            (#"{"token":"xyz"}"#, "invalid_field: tokens[0].token: 'xyz' is not even-length hex"),
            (#"{"token":"\#(Self.a)","token":"\#(Self.b)"}"#, "duplicate_field: tokens[0].token"),
            (#"{"token":"\#(Self.a)","vars":[]}"#, "invalid_field: tokens[0].vars: not a JSON object"),
            (
                #"{"token":"\#(Self.a)","vars":{"name":{"first":"A"}}}"#,
                "invalid_field: tokens[0].vars.name: an object; a variable is a string, number, boolean or null"
            ),
            (
                #"{"token":"\#(Self.a)","vars":{"first name":"A"}}"#,
                "invalid_field: tokens[0].vars: 'first name' is not a variable name (1...64 of A-Z a-z 0-9 _)"
            ),
            (
                #"{"token":"\#(Self.a)","vars":{"n\u0061me":"A"}}"#,
                #"invalid_field: tokens[0].vars: 'n\u0061me' is not a variable name (1...64 of A-Z a-z 0-9 _)"#
            ),
            (#"{"token":"\#(Self.a)","vars":{"name":"A","name":"B"}}"#, "duplicate_field: tokens[0].vars.name"),
        ]
        for (entry, expected) in cases {
            #expect(Self.rejection(Self.job(entry)) == expected, "\(entry)")
        }
        // The third entry is named as such.
        #expect(Self.rejection(Self.job(#""\#(Self.b)","\#(Self.c)",7"#)) == "invalid_field: tokens[2]: not a string or an object")
    }

    @Test func aTokensVarsAreCappedAt1KiBAsWritten() throws {
        let fits = String(repeating: "x", count: RecordVariables.maxBytes - #"{"name":""}"#.utf8.count)
        #expect(Self.rejection(Self.job(#"{"token":"\#(Self.a)","vars":{"name":"\#(fits)"}}"#)) == nil)
        #expect(
            Self.rejection(Self.job(#"{"token":"\#(Self.a)","vars":{"name":"\#(fits)x"}}"#))
                == "invalid_field: tokens[0].vars: 1025 bytes, at most 1024"
        )
    }

    @Test func theMostTokensStillApplyToObjectTokens() {
        let decoder = JobDecoder(bundleIDs: ["default": "com.example.app"], maxTokens: 2)
        let json = Self.job(Array(repeating: #"{"token":"\#(Self.a)"}"#, count: 3).joined(separator: ","))
        guard case .failure(let rejection) = decoder.decode(Array(json.utf8)) else {
            Issue.record("accepted")
            return
        }
        #expect(rejection.description == "invalid_field: tokens: 3 tokens, must be 1..2")
    }

    @Test func aResumedPersonalisedJobKeepsItsTokensOwnVariables() throws {
        let job = try Self.decode(
            Self.job(
                #"{"token":"\#(Self.a)","vars":{"count":1}},{"token":"\#(Self.b)","vars":{"count":2}},{"token":"\#(Self.c)","vars":{"count":3,"name":"C"}}"#
            )
        ).get()
        let resumed = job.narrowed(to: [0, 2])
        #expect(resumed.tokens == [Self.a, Self.c])
        #expect(try Self.rendered(resumed) == [#"{"aps":{"alert":"Hi there, 1"}}"#, #"{"aps":{"alert":"Hi C, 3"}}"#])
    }
}
