import PushlineAPNSCore
import Testing

@testable import PushlineWorker

/// A job's `job_done` from its tokens' outcomes: counts, attempts, holds, times, latencies.
@Suite struct JobTallyTests {
    static let source = RecordSource(topic: "push.jobs", partition: 1, offset: 9)

    static func job(tokens: Int, channel: String? = nil, meta: [UInt8]? = nil) -> Job {
        Job(
            id: "c42-17",
            tokens: channel == nil ? (0..<tokens).map { _ in "00" } : [],
            app: "default",
            topic: "com.example.app",
            pushType: channel == nil ? .alert : .liveactivity,
            priority: .immediate,
            payload: Array("{}".utf8),
            channelID: channel,
            meta: meta
        )
    }

    @Test func countsByStatusAndReasonSumsAttemptsAndTakesTheLatencies() {
        var tally = JobTally(expected: 5)
        tally.add(status: 200, reason: nil, attempts: 1, latencyMilliseconds: 10, heldMilliseconds: nil, answeredAt: 1_000_010)
        tally.add(status: 410, reason: "Unregistered", attempts: 1, latencyMilliseconds: 4, heldMilliseconds: nil, answeredAt: 1_000_020)
        tally.add(status: 200, reason: nil, attempts: 2, latencyMilliseconds: 30, heldMilliseconds: nil, answeredAt: 1_000_050)
        tally.add(status: 400, reason: "BadDeviceToken", attempts: 1, latencyMilliseconds: 2, heldMilliseconds: nil, answeredAt: 1_000_005)
        tally.add(status: 0, reason: "timeout", attempts: 5, latencyMilliseconds: 20, heldMilliseconds: nil, answeredAt: 1_000_040)
        let done = tally.record(for: Self.job(tokens: 5), source: Self.source)
        #expect(done.counts.map(\.name) == ["0 timeout", "200", "400 BadDeviceToken", "410 Unregistered"])
        #expect(done.counts.map(\.count) == [1, 2, 1, 1])
        #expect(done.attempts == 10)
        #expect(done.heldMilliseconds == nil)
        // First sent: the earliest answer less its latency (1_000_010 - 10 = 1_000_000).
        #expect(done.firstSent == 1_000_000)
        #expect(done.lastAnswer == 1_000_050)
        // 2, 4, 10, 20, 30: the median is 10.
        #expect(done.latencyP50Milliseconds == 10)
        #expect(done.latencyMaxMilliseconds == 30)
        #expect(done.recipients == .tokens(5))
        #expect(done.source == Self.source)
    }

    @Test func anEvenCountTakesTheLowerMiddleLatencyAndHoldsTakeTheLongest() {
        var tally = JobTally()
        for (latency, held) in [(8.0, 100.0), (2.0, nil), (6.0, 250.5), (4.0, nil)] as [(Double, Double?)] {
            tally.add(status: 200, reason: nil, attempts: 1, latencyMilliseconds: latency, heldMilliseconds: held, answeredAt: 50)
        }
        let done = tally.record(for: Self.job(tokens: 4), source: Self.source)
        #expect(done.latencyP50Milliseconds == 4)
        #expect(done.heldMilliseconds == 250.5)
        #expect(tally.outcomes == 4)
    }

    /// Up to two latencies are kept without an array; the third brings them all into one.
    @Test func theP50AndMaxOfOneTwoAndThreeLatencies() {
        var tally = JobTally()
        var p50s: [Double] = []
        var maxima: [Double] = []
        for latency in [9.0, 3.0, 5.0] {
            tally.add(status: 200, reason: nil, attempts: 1, latencyMilliseconds: latency, heldMilliseconds: nil, answeredAt: 50)
            let done = tally.record(for: Self.job(tokens: 3), source: Self.source)
            p50s.append(done.latencyP50Milliseconds)
            maxima.append(done.latencyMaxMilliseconds)
        }
        #expect(p50s == [9, 3, 5])
        #expect(maxima == [9, 9, 9])
        #expect(tally.outcomes == 3)
    }

    @Test func tokensNeverSentHaveNoSendTime() {
        var tally = JobTally()
        tally.add(status: 0, reason: "expired", attempts: 0, latencyMilliseconds: 0, heldMilliseconds: nil, answeredAt: 77)
        let done = tally.record(for: Self.job(tokens: 1), source: Self.source)
        #expect(done.firstSent == nil)
        #expect(done.lastAnswer == 77)
        #expect(done.counts == [.init(status: 0, reason: "expired", count: 1)])
    }

    @Test func theRecordIsEncodedInTheContractsOrderWithMetaLast() {
        var tally = JobTally()
        tally.add(status: 200, reason: nil, attempts: 1, latencyMilliseconds: 12.44, heldMilliseconds: 3.06, answeredAt: 1_790_000_000_100)
        let meta = Array(#"{"campaign":"c\/42","n":1.50}"#.utf8)
        let done = tally.record(for: Self.job(tokens: 0, channel: "dHN0LXNyY2gtY2hubA==", meta: meta), source: Self.source)
        let text = String(decoding: ResultRecord.jobDone(done).encoded(), as: UTF8.self)
        #expect(
            text
                == #"{"type":"job_done","job_id":"c42-17","app":"default","channel_id":"dHN0LXNyY2gtY2hubA==","counts":{"200":1},"attempts":1,"held_ms":3.1,"first_sent":1790000000088,"last_answer":1790000000100,"latency_ms":{"p50":12.4,"max":12.4},"source":{"topic":"push.jobs","partition":1,"offset":9},"meta":{"campaign":"c\/42","n":1.50}}"#
        )
        #expect(ResultRecord.jobDone(done).key == "c42-17")
        var plain = JobTally()
        plain.add(status: 410, reason: "Unregistered", attempts: 1, latencyMilliseconds: 1, heldMilliseconds: nil, answeredAt: 5)
        let second = String(
            decoding: ResultRecord.jobDone(plain.record(for: Self.job(tokens: 1), source: Self.source)).encoded(),
            as: UTF8.self
        )
        #expect(
            second
                == #"{"type":"job_done","job_id":"c42-17","app":"default","tokens":1,"counts":{"410 Unregistered":1},"attempts":1,"first_sent":4,"last_answer":5,"latency_ms":{"p50":1.0,"max":1.0},"source":{"topic":"push.jobs","partition":1,"offset":9}}"#
        )
    }

    /// A first delivered outcome shares one array among tallies (no allocation of its own): each
    /// tally's counts stay its own as they grow.
    @Test func talliesThatStartDeliveredKeepTheirOwnCounts() {
        var first = JobTally()
        var second = JobTally()
        first.add(status: 200, reason: nil, attempts: 1, latencyMilliseconds: 1, heldMilliseconds: nil, answeredAt: 10)
        second.add(status: 200, reason: nil, attempts: 1, latencyMilliseconds: 1, heldMilliseconds: nil, answeredAt: 10)
        first.add(status: 200, reason: nil, attempts: 1, latencyMilliseconds: 1, heldMilliseconds: nil, answeredAt: 11)
        second.add(status: 410, reason: "Unregistered", attempts: 1, latencyMilliseconds: 1, heldMilliseconds: nil, answeredAt: 11)
        #expect(first.counts == [.init(status: 200, reason: nil, count: 2)])
        #expect(second.counts == [.init(status: 200, reason: nil, count: 1), .init(status: 410, reason: "Unregistered", count: 1)])
        var third = JobTally()
        third.add(status: 200, reason: nil, attempts: 1, latencyMilliseconds: 1, heldMilliseconds: nil, answeredAt: 12)
        #expect(third.counts == [.init(status: 200, reason: nil, count: 1)])
    }

    /// A single-token job's `job_done` written straight from its outcome (a group's member) is
    /// the record a tally of that one outcome gives, byte for byte.
    @Test(arguments: [
        APNSOutcome(response: Self.response(200), attempts: 1, latencyMilliseconds: 12.44),
        APNSOutcome(
            response: Self.response(410, body: #"{"reason":"Unregistered","timestamp":5}"#),
            attempts: 2,
            latencyMilliseconds: 3.5
        ),
        APNSOutcome(noResponse: .expired, attempts: 0, latencyMilliseconds: 0),
        APNSOutcome(noResponse: .timeout, attempts: 3, latencyMilliseconds: 1500.06),
        {
            var held = APNSOutcome(response: Self.response(200), attempts: 1, latencyMilliseconds: 7.77)
            held.heldMilliseconds = 250.04
            return held
        }(),
    ])
    func aSingleOutcomeIsWrittenAsItsTallyWouldBe(outcome: APNSOutcome) {
        let meta = Array(#"{"campaign":"spring"}"#.utf8)
        for job in [Self.job(tokens: 1), Self.job(tokens: 1, meta: meta)] {
            var tally = JobTally(expected: 1)
            tally.add(outcome, answeredAt: 1_790_000_000_100)
            let expected = tally.record(for: job, source: Self.source).encoded()
            let estimate = ResultRecord.JobDone.estimateOne(job: job, outcome: outcome, source: Self.source)
            let written = JSONWriter.encode(estimate: estimate) {
                ResultRecord.JobDone.writeOne(job: job, outcome: outcome, answeredAt: 1_790_000_000_100, source: Self.source, into: &$0)
            }
            #expect(String(decoding: written, as: UTF8.self) == String(decoding: expected, as: UTF8.self))
        }
    }

    static func response(_ status: Int, body: String = "") -> APNSResponse {
        APNSResponse(status: status, apnsID: nil, apnsUniqueID: nil, body: Array(body.utf8))
    }
}
