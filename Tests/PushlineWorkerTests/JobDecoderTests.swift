import Foundation
import PushlineAPNSCore
import Testing

@testable import PushlineWorker

@Suite struct JobDecoderTests {
    let decoder = JobDecoder(bundleIDs: ["default": "com.example.app", "news": "com.example.news"])
    let token = String(repeating: "ab", count: 32)

    func decode(_ text: String) -> Result<Job, JobRejection> {
        decoder.decode(Array(text.utf8))
    }

    func rejection(_ text: String) -> JobRejection? {
        if case .failure(let rejection) = decode(text) { return rejection }
        return nil
    }

    @Test func decodesAFullJob() throws {
        let text = """
            {"id":"c42-17","tokens":["\(token)","00ff"],"app":"news","push_type":"voip","priority":5,\
            "expiration":1790000000,"collapse_id":"c1","payload":{"aps":{"alert":"a\\/b"},"n":1.50,"z":1e2},\
            "deadline":"2026-11-22T06:00:00.250+01:00","custom":{"ignored":true}}
            """
        let job = try decode(text).get()
        #expect(job.id == "c42-17")
        #expect(job.tokens == [token, "00ff"])
        #expect(job.app == "news")
        #expect(job.topic == "com.example.news.voip")
        #expect(job.pushType == .voip)
        #expect(job.priority == .powerConsiderate)
        #expect(job.expiration == 1_790_000_000)
        #expect(job.collapseID == "c1")
        #expect(String(decoding: job.payload, as: UTF8.self) == #"{"aps":{"alert":"a\/b"},"n":1.50,"z":1e2}"#)
        // 2026-11-22T05:00:00.250Z
        #expect(job.deadlineMilliseconds == 1_795_323_600_250)
    }

    @Test func appliesDefaults() throws {
        let job = try decode(#"{"id":"1","token":"\#(token)","payload":{}}"#).get()
        #expect(job.app == "default")
        #expect(job.topic == "com.example.app")
        #expect(job.pushType == .alert)
        #expect(job.priority == .immediate)
        #expect(job.expiration == nil)
        #expect(job.deadlineMilliseconds == nil)
        let background = try decode(#"{"id":"1","token":"\#(token)","push_type":"background","payload":{}}"#).get()
        #expect(background.priority == .powerConsiderate)
        let widgets = try decode(#"{"id":"1","token":"\#(token)","push_type":"widgets","payload":{}}"#).get()
        #expect(widgets.topic == "com.example.app.push-type.widgets")
        let controls = try decode(#"{"id":"1","token":"\#(token)","push_type":"controls","payload":{}}"#).get()
        #expect(controls.topic == "com.example.app.push-type.controls")
        let topic = try decode(#"{"id":"1","token":"\#(token)","topic":"x.y","payload":{}}"#).get()
        #expect(topic.topic == "x.y")
    }

    @Test func rejectsEachKindOfBadJobWithAReason() {
        let bigPayload = #"{"id":"1","token":"\#(token)","payload":{"a":""# + String(repeating: "x", count: 4100) + "\"}}"
        let cases: [(String, JobRejection.Code)] = [
            ("not json", .invalidJSON),
            ("[1,2]", .notAnObject),
            ("\"str\"", .notAnObject),
            ("", .invalidJSON),
            (#"{"token":"\#(token)","payload":{}}"#, .missingField),
            (#"{"id":"","token":"\#(token)","payload":{}}"#, .invalidField),
            (#"{"id":"\#(String(repeating: "i", count: 129))","token":"\#(token)","payload":{}}"#, .invalidField),
            (#"{"id":7,"token":"\#(token)","payload":{}}"#, .invalidField),
            (#"{"id":"1","payload":{}}"#, .missingField),
            (#"{"id":"1","token":"xyz","payload":{}}"#, .invalidField),
            (#"{"id":"1","token":"abc","payload":{}}"#, .invalidField),
            (#"{"id":"1","tokens":[],"payload":{}}"#, .invalidField),
            (#"{"id":"1","tokens":["\#(token)",5],"payload":{}}"#, .invalidField),
            (#"{"id":"1","token":"\#(token)","tokens":["\#(token)"],"payload":{}}"#, .invalidField),
            (#"{"id":"1","token":"\#(token)","payload":"hi"}"#, .invalidField),
            (#"{"id":"1","token":"\#(token)"}"#, .missingField),
            (bigPayload, .payloadTooLarge),
            (#"{"id":"1","token":"\#(token)","app":"nope","payload":{}}"#, .unknownApp),
            (#"{"id":"1","token":"\#(token)","priority":7,"payload":{}}"#, .invalidField),
            (#"{"id":"1","token":"\#(token)","push_type":"fax","payload":{}}"#, .invalidField),
            (#"{"id":"1","token":"\#(token)","collapse_id":"\#(String(repeating: "c", count: 65))","payload":{}}"#, .invalidField),
            (#"{"id":"1","token":"\#(token)","deadline":"tomorrow","payload":{}}"#, .invalidField),
            (#"{"id":"1","token":"\#(token)","expiration":1.5,"payload":{}}"#, .invalidField),
            // APNs refuses a background push at priority 10 (BadPriority): refused before sending.
            (#"{"id":"1","token":"\#(token)","push_type":"background","priority":10,"payload":{}}"#, .invalidField),
            // Later than 9999-12-31T23:59:59Z: would overflow milliseconds in the pipeline.
            (#"{"id":"1","token":"\#(token)","expiration":253402300800,"payload":{}}"#, .invalidField),
            (#"{"id":"1","token":"\#(token)","expiration":9223372036854775807,"payload":{}}"#, .invalidField),
            (#"{"id":"1","id":"2","token":"\#(token)","payload":{}}"#, .duplicateField),
            // A key written with escapes is the field it spells.
            (#"{"id":"1","\u0069d":"2","token":"\#(token)","payload":{}}"#, .duplicateField),
            (#"{id":"1","token":"\#(token)","payload":{}}"#, .invalidJSON),
            // A sender's own field, repeated.
            (#"{"id":"1","x":1,"token":"\#(token)","x":2,"payload":{}}"#, .duplicateField),
            // The whole record is read before a repeated field is named: broken JSON wins.
            (#"{"id":"1","id":"2","token":"\#(token)","payload":{}"#, .invalidJSON),
        ]
        for (text, code) in cases {
            #expect(rejection(text)?.code == code, "\(text.prefix(80))")
        }
        #expect(rejection(#"{"id":"j9","token":"zz","payload":{}}"#)?.jobID == "j9")
        // Escaped keys are matched once decoded: this job has an id, a token and a payload.
        let escaped = try? decode(#"{"\u0069d":"j8","tok\u0065n":"\#(token)","payload":{}}"#).get()
        #expect(escaped?.id == "j8" && escaped?.tokens.count == 1)
    }

    /// Up to 16 members are looked up by a linear scan, more through a dictionary: both find
    /// every field and refuse a repeated one.
    @Test func findsFieldsAndRefusesDuplicatesOnBothSidesOfTheLinearLimit() {
        for extra in [0, JobFields.linearLimit, 200] {
            let padding = (0..<extra).map { #""x\#($0)":\#($0),"# }.joined()
            let job = try? decode(#"{\#(padding)"id":"j1","token":"\#(token)","priority":5,"payload":{}}"#).get()
            #expect(job?.id == "j1" && job?.priority == .powerConsiderate, "\(extra) extra members")
            #expect(
                rejection(#"{"id":"1",\#(padding)"token":"\#(token)","id":"2","payload":{}}"#)?.code == .duplicateField,
                "\(extra) extra members"
            )
        }
    }

    @Test func rejectsOversizedAndHostileRecords() {
        let huge = [UInt8](repeating: UInt8(ascii: " "), count: 1_048_576)
        #expect(rejection(String(decoding: huge, as: UTF8.self))?.code == .recordTooLarge)
        let deep =
            #"{"id":"1","token":"\#(token)","payload":"# + String(repeating: "{\"a\":", count: 10_000) + "1"
            + String(repeating: "}", count: 10_001)
        #expect(rejection(deep)?.code == .invalidJSON)
        if case .failure(let rejection) = decoder.decode([0x7B, 0x22, 0x69, 0x64, 0x22, 0x3A, 0x22, 0xFF, 0x22, 0x7D]) {
            #expect(rejection.code == .invalidJSON)
        } else {
            Issue.record("invalid UTF-8 accepted")
        }
        let many = (0..<10_000).map { _ in "\"\(token)\"" }.joined(separator: ",")
        let job = try? decode(#"{"id":"1","tokens":[\#(many)],"payload":{}}"#).get()
        #expect(job?.tokens.count == 10_000)
        let tooMany = (0..<10_001).map { _ in "\"00\"" }.joined(separator: ",")
        let refused = rejection(#"{"id":"1","tokens":[\#(tooMany)],"payload":{}}"#)
        #expect(refused?.code == .invalidField)
        #expect(refused?.detail == "tokens: 10001 tokens, must be 1..10000")
    }

    /// Mutated and random records never trap: every input either decodes or is rejected with a reason.
    @Test func mutatedRecordsAreDecodedOrRejected() {
        var generator = SplitMix64(seed: 0x5eed)
        let seed = Array(
            #"{"id":"c1","tokens":["\#(token)","00ff"],"priority":10,"payload":{"aps":{"alert":"hi","n":[1,2.5e3,null,true]}}}"#.utf8
        )
        var decoded = 0
        var rejected = 0
        for _ in 0..<20_000 {
            let record = mutate(seed, using: &generator, fragments: [])
            switch decoder.decode(record) {
            case .success: decoded += 1
            case .failure(let rejection):
                rejected += 1
                #expect(!rejection.detail.isEmpty)
            }
        }
        #expect(decoded + rejected == 20_000)
        #expect(rejected > 0)
    }
}

/// Mutated records, reproducible: the seed is fixed (`defaultSeed`) unless `PUSHLINE_FUZZ_SEED`
/// gives another, and every failure names it, so `PUSHLINE_FUZZ_SEED=<seed>` replays the run. By
/// default a fixed count of inputs (about a second in a debug build); `PUSHLINE_FUZZ_SECONDS=N`
/// asks for a longer search of N seconds instead (a duration-bounded search, not a timed test:
/// nothing asserts on time).
@Suite struct JobDecoderFuzzTests {
    static let defaultSeed: UInt64 = 0x5EED_D0C0_DE17
    static let defaultInputs = 50_000

    @Test func mutatedRecordsDecodeOrAreRejectedWithAReason() {
        let environment = ProcessInfo.processInfo.environment
        let seed = environment["PUSHLINE_FUZZ_SEED"].flatMap { UInt64($0) } ?? Self.defaultSeed
        let seconds = environment["PUSHLINE_FUZZ_SECONDS"].flatMap { Int($0) }
        let decoder = JobDecoder(bundleIDs: ["default": "com.example.app"])
        var generator = SplitMix64(seed: seed)
        let seeds = [
            #"{"id":"c1","tokens":["abababababababababababababababababababababababababababababababab","00ff"],"priority":10,"payload":{"aps":{"alert":"hi","n":[1,2.5e3,null,true]}}}"#,
            #"{"id":"c2","token":"cdcd","push_type":"voip","expiration":0,"collapse_id":"x","deadline":"2030-01-01T00:00:00Z","payload":{"aps":{}}}"#,
        ].map { Array($0.utf8) }
        let fragments = ["{", "}", "[", "]", "\"", "\\", ",", ":", "null", "1e999", "\\u0000", "\\ud800"].map { Array($0.utf8) }
        let deadline = seconds.map { ContinuousClock.now + .seconds($0) }
        var inputs = 0
        var reasonless = 0
        var firstReasonless: (index: Int, record: [UInt8])?
        while deadline.map({ ContinuousClock.now < $0 }) ?? (inputs < Self.defaultInputs) {
            for _ in 0..<1000 {
                let record = mutate(seeds[inputs % seeds.count], using: &generator, fragments: fragments)
                if case .failure(let rejection) = decoder.decode(record), rejection.detail.isEmpty {
                    reasonless += 1
                    if firstReasonless == nil { firstReasonless = (inputs, record) }
                }
                inputs += 1
            }
        }
        let replay = "replay with PUSHLINE_FUZZ_SEED=\(seed)\(seconds.map { " PUSHLINE_FUZZ_SECONDS=\($0)" } ?? "")"
        #expect(
            reasonless == 0,
            """
            \(reasonless) of \(inputs) inputs rejected without a reason; the first, input \(firstReasonless?.index ?? -1): \
            \(firstReasonless.map { String(decoding: $0.record, as: UTF8.self).debugDescription } ?? "") (\(replay))
            """
        )
        #expect(inputs > 0, "no input tried (\(replay))")
    }
}

/// One to six mutations of `record`: a byte replaced, removed or inserted, or (when `fragments` are
/// given) a JSON fragment spliced in.
func mutate(_ record: [UInt8], using generator: inout SplitMix64, fragments: [[UInt8]]) -> [UInt8] {
    var record = record
    let kinds: UInt64 = fragments.isEmpty ? 3 : 4
    for _ in 0..<Int(generator.next() % 6 + 1) {
        let position = record.isEmpty ? 0 : Int(generator.next() % UInt64(record.count))
        switch generator.next() % kinds {
        case 0 where !record.isEmpty: record[position] = UInt8(truncatingIfNeeded: generator.next())
        case 1 where !record.isEmpty: record.remove(at: position)
        case 3: record.insert(contentsOf: fragments[Int(generator.next() % UInt64(fragments.count))], at: position)
        default: record.insert(UInt8(truncatingIfNeeded: generator.next()), at: position)
        }
    }
    return record
}
