import Logging
import PushlineAPNSCore
import Synchronization
import Testing

@testable import PushlineWorker

/// The registry of what is cancelled: a cancel by campaign or by job id until it expires, a lift,
/// an expired cancel that is no cancel, and the synchronised wrapper's fast path and sweeps.
@Suite struct CancelStateTests {
    static func cancel(_ target: CancelTarget, until expires: Int64, written: Int64 = 0, reason: String? = nil) -> CancelChange {
        .cancel(target: target, reason: reason, writtenAtMilliseconds: written, expiresAtMilliseconds: expires)
    }

    @Test func aCampaignCancelCoversEveryJobOfTheCampaignAndAJobCancelItsJobOnly() {
        var state = CancelState()
        #expect(state.apply(Self.cancel(.campaign("spring"), until: 1000), now: 10) == .cancelled(renewed: false))
        #expect(state.apply(Self.cancel(.job("j-7"), until: 1000), now: 10) == .cancelled(renewed: false))
        #expect(state.isCancelled(campaign: "spring", jobID: "a", now: 20))
        #expect(!state.isCancelled(campaign: "summer", jobID: "a", now: 20))
        #expect(!state.isCancelled(campaign: nil, jobID: "a", now: 20))
        #expect(state.isCancelled(campaign: nil, jobID: "j-7", now: 20))
        #expect(state.isCancelled(campaign: "summer", jobID: "j-7", now: 20))
        // A job id and a campaign of the same text are different targets.
        #expect(!state.isCancelled(campaign: "j-7", jobID: "x", now: 20))
        #expect(!state.isCancelled(campaign: nil, jobID: "spring", now: 20))
    }

    @Test func aLiftEndsTheCancelAndACancelAgainRenewsIt() {
        var state = CancelState()
        _ = state.apply(Self.cancel(.campaign("c"), until: 1000), now: 0)
        #expect(state.apply(Self.cancel(.campaign("c"), until: 2000, reason: "again"), now: 1) == .cancelled(renewed: true))
        #expect(state.entry(.campaign("c"), now: 1)?.reason == "again")
        #expect(state.apply(.lift(.campaign("c")), now: 2) == .lifted(wasCancelled: true))
        #expect(!state.isCancelled(campaign: "c", jobID: "j", now: 3))
        #expect(state.apply(.lift(.campaign("c")), now: 4) == .lifted(wasCancelled: false))
        #expect(state.count == 0)
    }

    @Test func anExpiredCancelIsNoCancelAndIsDropped() {
        var state = CancelState()
        #expect(state.apply(Self.cancel(.campaign("old"), until: 100), now: 100) == .expired, "expired when it arrives")
        #expect(state.count == 0)
        _ = state.apply(Self.cancel(.campaign("c"), until: 100), now: 0)
        _ = state.apply(Self.cancel(.campaign("d"), until: 500), now: 0)
        #expect(state.isCancelled(campaign: "c", jobID: "j", now: 99))
        #expect(!state.isCancelled(campaign: "c", jobID: "j", now: 100))
        #expect(state.dropExpired(now: 100) == [.campaign("c")])
        #expect(state.count == 1, "c dropped once past its expiry, d kept")
        // An expired cancel arriving for a cancelled target lifts the older one: the topic's
        // latest record for a target is what counts.
        #expect(state.apply(Self.cancel(.campaign("d"), until: 50), now: 200) == .expired)
        #expect(!state.isCancelled(campaign: "d", jobID: "j", now: 201))
    }

    /// Long seeded runs of cancels, lifts, re-cancels and clock steps against a plain list of
    /// (target, expiry): both must agree on every question.
    @Test(arguments: [1, 2, 3, 4, 5] as [UInt64]) func agreesWithASimpleOracle(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        var state = CancelState()
        var oracle: [CancelTarget: Int64] = [:]
        var now: Int64 = 1_000
        let campaigns = (0..<6).map { "c\($0)" }
        let jobs = (0..<6).map { "j\($0)" }
        func target() -> CancelTarget {
            Bool.random(using: &random)
                ? .campaign(campaigns.randomElement(using: &random)!) : .job(jobs.randomElement(using: &random)!)
        }
        for step in 0..<5_000 {
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<3:
                let target = target()
                let expires = now + Int64.random(in: -50...400, using: &random)
                _ = state.apply(Self.cancel(target, until: expires, written: now), now: now)
                oracle[target] = expires > now ? expires : nil
            case 3..<5:
                let target = target()
                _ = state.apply(.lift(target), now: now)
                oracle[target] = nil
            case 5..<7:
                now += Int64.random(in: 0...120, using: &random)
            default:
                let campaign = Bool.random(using: &random) ? campaigns.randomElement(using: &random) : nil
                let job = jobs.randomElement(using: &random)!
                let expected =
                    (campaign.flatMap { oracle[.campaign($0)] }.map { $0 > now } ?? false) || (oracle[.job(job)].map { $0 > now } ?? false)
                #expect(
                    state.isCancelled(campaign: campaign, jobID: job, now: now) == expected,
                    "seed \(seed), step \(step): campaign \(campaign ?? "-"), job \(job)"
                )
            }
            let live = oracle.filter { $0.value > now }.count
            #expect(state.count >= live, "seed \(seed), step \(step)")
            state.dropExpired(now: now)
            #expect(state.count == live, "seed \(seed), step \(step): expired cancels are dropped")
        }
    }

    // MARK: The synchronised registry

    final class Clock: Sendable {
        let now = Atomic<Int64>(1_000)
        var read: @Sendable () -> Int64 { { [self] in now.load(ordering: .relaxed) } }
    }

    static func job(_ id: String, campaign: String?) -> Job {
        var job = Job(id: id, tokens: ["00"], app: "default", topic: "t", pushType: .alert, priority: .immediate, payload: [])
        job.campaign = campaign
        return job
    }

    @Test func theRegistryAnswersWithoutALockWhenNothingIsCancelledAndSweepsAfterEachCancel() {
        let clock = Clock()
        let cancellations = Cancellations(logger: Logger(label: "test"), wallClockMilliseconds: clock.read)
        let sweeps = Atomic<Int>(0)
        cancellations.onCancel { sweeps.add(1, ordering: .relaxed) }
        #expect(!cancellations.any)
        #expect(!cancellations.isCancelled(Self.job("j", campaign: "c")))
        let epoch = cancellations.epoch

        cancellations.apply(Self.cancel(.campaign("c"), until: 2_000, written: 900))
        #expect(cancellations.any)
        #expect(sweeps.load(ordering: .relaxed) == 1, "the cancel swept before apply returned")
        #expect(cancellations.epoch != epoch)
        #expect(cancellations.isCancelled(Self.job("j", campaign: "c")))
        #expect(!cancellations.isCancelled(Self.job("j", campaign: nil)))

        // The intake's second sweep: only when a cancel came since it read the epoch.
        cancellations.sweepIfChanged(since: cancellations.epoch)
        #expect(sweeps.load(ordering: .relaxed) == 1)
        cancellations.sweepIfChanged(since: epoch)
        #expect(sweeps.load(ordering: .relaxed) == 2)

        // A lift sweeps nothing; an expiry turns the fast path back on.
        cancellations.apply(Self.cancel(.job("k"), until: 3_000))
        cancellations.apply(.lift(.job("k")))
        #expect(sweeps.load(ordering: .relaxed) == 3)
        clock.now.store(2_000, ordering: .relaxed)
        #expect(!cancellations.isCancelled(Self.job("j", campaign: "c")))
        #expect(!cancellations.any, "the expired cancel was dropped")
    }

    /// A cancel that arrives already expired is logged and ignored: no sweep.
    @Test func anExpiredCancelSweepsNothing() {
        let clock = Clock()
        let cancellations = Cancellations(logger: Logger(label: "test"), wallClockMilliseconds: clock.read)
        let sweeps = Atomic<Int>(0)
        cancellations.onCancel { sweeps.add(1, ordering: .relaxed) }
        cancellations.apply(Self.cancel(.campaign("c"), until: 1_000))
        #expect(sweeps.load(ordering: .relaxed) == 0)
        #expect(!cancellations.any)
    }
}
