import PushlineAPNSCore
import Testing

@testable import PushlineWorker

/// A job's countdown: what each event returns (the `job_done` due, the job ended), driven alone.
@Suite struct JobCountdownTests {
    static let ok = APNSOutcome(response: APNSResponse(status: 200), attempts: 1, latencyMilliseconds: 1)

    /// The `job_done` is due once every token's records are produced, and the job completes
    /// with the last acknowledgement (every token's, then the `job_done`'s), not before.
    @Test func aJobCompletesWithItsLastAcknowledgement() {
        let countdown = JobCountdown(tokens: 3)
        for _ in 0..<3 { countdown.tokenFinal(Self.ok, answeredAt: 1) }
        #expect(countdown.tokensProduced(2) == nil)
        #expect(countdown.acknowledged() == nil)
        #expect(countdown.tokensProduced(1) == .summaryDue)
        #expect(countdown.acknowledged() == nil)
        #expect(countdown.acknowledged() == nil)
        #expect(countdown.acknowledged() == .completed, "the job_done's acknowledgement ends it")
        let summary = countdown.summary(for: JobTallyTests.job(tokens: 3), source: JobTallyTests.source)
        #expect(summary.counts == [.init(status: 200, reason: nil, count: 3)] && summary.attempts == 3)
    }

    /// An abandoned token: no `job_done` is due, and the job ends given up once the other
    /// tokens' records are acknowledged.
    @Test func anAbandonedTokenEndsTheJobWithoutAJobDone() {
        let countdown = JobCountdown(tokens: 2)
        countdown.tokenFinal(Self.ok, answeredAt: 1)
        #expect(countdown.tokenAbandoned() == nil)
        #expect(countdown.tokensProduced(1) == nil, "no job_done once a token was abandoned")
        #expect(countdown.acknowledged() == .abandoned)
    }

    /// When the abandoned token is the last outcome known, after the others are acknowledged,
    /// the abandonment itself ends the job.
    @Test func theLastTokenAbandonedEndsTheJob() {
        let countdown = JobCountdown(tokens: 2)
        #expect(countdown.tokensProduced(1) == nil)
        #expect(countdown.acknowledged() == nil)
        #expect(countdown.tokenAbandoned() == .abandoned)
    }

    /// A token's records produced after the abandonment ends the job when their acknowledgement
    /// already came (`tokensProduced` then counts the `job_done`'s absence last).
    @Test func theAbsentJobDoneCanBeTheLastCount() {
        let countdown = JobCountdown(tokens: 2)
        #expect(countdown.tokenAbandoned() == nil)
        #expect(countdown.acknowledged() == nil, "a token's records acknowledged before its run ended")
        #expect(countdown.tokensProduced(1) == .ended(.abandoned))
    }
}
