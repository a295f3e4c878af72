import PushlineAPNSCore
import PushlineKafka
import Testing

@testable import PushlineWorker

/// A personalised job through `JobPipeline` (fakes: no broker, no socket): the rendered tokens'
/// requests go out each with its own payload, heard at their own indices; a token missing a
/// variable and one whose payload is too large end at once with their own records, before any
/// answer; the `job_done` counts every token; the record is completed once Kafka has them all.
@Suite struct PersonalisedPipelineTests {
    @Test func unrenderableTokensEndWithTheirOwnRecordsAndTheRestGoOutWithTheirOwnPayloads() throws {
        let harness = try PipelineHarness()
        let long = String(repeating: "L", count: 1000)
        let padding = String(repeating: "p", count: 3090)
        let tokens = (0..<6).map(PipelineHarness.token)
        let vars = [#"{"name":"Anna"}"#, #"{"name":"B\"o"}"#, #"{}"#, #"{"name":"\#(long)"}"#, #"{"name":7}"#, nil]
        let entries = zip(tokens, vars).map { token, vars in
            vars.map { #"{"token":"\#(token)","vars":\#($0)}"# } ?? "\"\(token)\""
        }
        let json =
            #"{"id":"p1","tokens":[\#(entries.joined(separator: ","))],"payload":{"aps":{"alert":"Hi {{name}}"},"pad":"\#(padding)"}}"#
        harness.handle([PipelineHarness.record(json, offset: 3)])

        // Tokens 2 and 5 lack `name`, token 3 renders too large: their records are out already.
        let early = harness.produced(on: JobPipelineTests.results)
        #expect(early.count == 3)
        for (index, reason) in [(2, "missing_variable"), (5, "missing_variable"), (3, "payload_too_large")] {
            #expect(
                early.filter {
                    $0.value.contains(#""token":"\#(tokens[index])""#) && $0.value.contains(#""status":0,"reason":"\#(reason)""#)
                }
                .count == 1,
                "token \(index)"
            )
        }
        // The others: one batch per run of rendered tokens, each heard at its tokens' own indices.
        let batches = harness.sender.batches
        #expect(batches.map(\.firstIndex) == [0, 4])
        #expect(batches.map(\.batch.count) == [2, 1])
        let payloads = batches.flatMap { sent in
            (0..<sent.batch.count).map { String(decoding: sent.batch.payloadBuffer!.payload(at: $0), as: UTF8.self) }
        }
        let prefix = #"{"aps":{"alert":"Hi "#
        let suffix = #""},"pad":"\#(padding)"}"#
        #expect(payloads == [prefix + "Anna" + suffix, prefix + #"B\"o"# + suffix, prefix + "7" + suffix])
        #expect(
            batches.flatMap { sent in (0..<sent.batch.count).map { sent.batch.tokens.token(at: $0) } } == [tokens[0], tokens[1], tokens[4]]
        )
        harness.sender.answerAll { _ in .answer(200) }

        let records = harness.produced(on: JobPipelineTests.results)
        let deliveries = records.filter { $0.value.hasPrefix(#"{"type":"delivery""#) }
        #expect(deliveries.count == 6)
        for index in [0, 1, 4] {
            #expect(
                deliveries.filter { $0.value.contains(#""token":"\#(tokens[index])""#) && $0.value.contains(#""status":200"#) }.count == 1
            )
        }
        let done = try #require(records.last)
        #expect(done.value.hasPrefix(#"{"type":"job_done","job_id":"p1","#))
        #expect(done.value.contains(#""tokens":6"#))
        #expect(
            done.value.contains(#""200":3"#) && done.value.contains(#""0 missing_variable":2"#)
                && done.value.contains(#""0 payload_too_large":1"#)
        )
        harness.producer.acknowledge(harness.producer.waiting.count)
        #expect(harness.released.completedOffsets == [3])
        #expect(harness.gate.count == 0 && harness.gate.jobs.value == 0)
    }

    @Test func aJobWhoseEveryTokenFailsSendsNothingAndIsDone() throws {
        let harness = try PipelineHarness()
        let json =
            #"{"id":"p2","tokens":[{"token":"\#(PipelineHarness.token(1))"},"\#(PipelineHarness.token(2))"],"payload":{"aps":{"alert":"{{x}}"}}}"#
        harness.handle([PipelineHarness.record(json, offset: 4)])
        #expect(harness.sender.batches.isEmpty)
        let records = harness.produced(on: JobPipelineTests.results)
        #expect(records.count == 3)
        #expect(records.last?.value.contains(#""0 missing_variable":2"#) == true)
        harness.producer.acknowledge(harness.producer.waiting.count)
        #expect(harness.released.completedOffsets == [4])
    }

    @Test func aSingleTokenPersonalisedJobInARunIsRenderedToo() throws {
        let harness = try PipelineHarness()
        let personal =
            #"{"id":"s1","tokens":[{"token":"\#(PipelineHarness.token(1))","vars":{"n":"Zoë"}}],"payload":{"aps":{"alert":"{{n}}"}}}"#
        harness.handle([
            PipelineHarness.record(personal, offset: 1),
            PipelineHarness.record(PipelineHarness.job("s2", tokens: [PipelineHarness.token(2)]), offset: 2),
        ])
        let payloads = harness.sender.batches.compactMap { $0.batch.payloadBuffer }
        #expect(
            payloads.count == 1 && payloads.first.map { String(decoding: $0.payload(at: 0), as: UTF8.self) } == #"{"aps":{"alert":"Zoë"}}"#
        )
        harness.sender.answerAll { _ in .answer(200) }
        harness.producer.acknowledge(harness.producer.waiting.count)
        #expect(harness.released.completedOffsets.sorted() == [1, 2])
    }

    /// A rehearsal of a personalised job renders it: the tokens that would fail say why, the
    /// others end `dry_run`, and nothing reaches the client.
    @Test func aDryRunRendersAndCountsWhatWouldFail() throws {
        let harness = try PipelineHarness()
        let tokens = (0..<3).map(PipelineHarness.token)
        let long = String(repeating: "L", count: 4100)
        let json =
            #"{"id":"d1","dry_run":true,"tokens":[{"token":"\#(tokens[0])","vars":{"n":"A"}},"\#(tokens[1])",{"token":"\#(tokens[2])","vars":{"n":"\#(long)"}}],"payload":{"aps":{"alert":"{{n}}"}}}"#
        // Too long a var for a token's vars: the job is refused whole.
        harness.handle([PipelineHarness.record(json, offset: 5)])
        #expect(harness.produced(on: JobPipelineTests.results).first?.value.contains("tokens[2].vars: ") == true)
        let fits = String(repeating: "L", count: 1000)
        let padded =
            #"{"id":"d2","dry_run":true,"tokens":[{"token":"\#(tokens[0])","vars":{"n":"A"}},"\#(tokens[1])",{"token":"\#(tokens[2])","vars":{"n":"\#(fits)"}}],"payload":{"aps":{"alert":"{{n}}"},"pad":"\#(String(repeating: "p", count: 3100))"}}"#
        harness.handle([PipelineHarness.record(padded, offset: 6)])
        #expect(harness.sender.batches.isEmpty && harness.sender.unanswered == 0)
        let done = try #require(harness.produced(on: JobPipelineTests.results).last)
        #expect(done.value.hasPrefix(#"{"type":"job_done","job_id":"d2""#))
        #expect(done.value.contains(#""0 dry_run":1"#) && done.value.contains(#""0 missing_variable":1"#))
        #expect(done.value.contains(#""0 payload_too_large":1"#))
    }
}
