import PushlineAPNSCore
import Testing

@testable import PushlineWorker

/// `JobStart.decide`, the one decision at a job's start, without I/O: every combination of what
/// a job is (a broadcast, one or several tokens, personalised, a rehearsal) and what the intake
/// knows of it (expired, cancelled, a run of one or several, resumed), against a table written
/// the other way round (from each outcome to the jobs that get it). The pipeline tests show the
/// pipeline acting on each outcome (`JobPipelineTests`, `PersonalisedPipelineTests`,
/// `DryRunTests`, `CancelPipelineTests`, `BroadcastJobTests`); apps and lanes are no input, so
/// every app and both lanes take the same way (`JobPipelineTests`' several-apps groups).
@Suite struct JobStartTests {
    let decoder = JobDecoder(bundleIDs: ["default": "com.example.app", "other": "com.example.other"])

    enum Kind: CaseIterable { case broadcast, oneToken, severalTokens, personalisedOne, personalisedSeveral }

    func job(_ kind: Kind, dryRun: Bool, app: String) throws -> Job {
        let token = { (n: Int) in String(repeating: "a", count: 63) + String(n) }
        let plain = #""payload":{"aps":{"alert":"hi"}}"#
        let templated = #""payload":{"aps":{"alert":"hi {{name|you}}"}}"#
        let fields: String
        switch kind {
        case .broadcast:
            fields = #""channel_id":"dHN0LTI1NTE=","push_type":"liveactivity","payload":{"aps":{"event":"update"}}"#
        case .oneToken: fields = #""token":"\#(token(1))",\#(plain)"#
        case .severalTokens: fields = #""tokens":["\#(token(1))","\#(token(2))"],\#(plain)"#
        case .personalisedOne: fields = #""tokens":[{"token":"\#(token(1))","vars":{"name":"A"}}],\#(templated)"#
        case .personalisedSeveral:
            fields = #""tokens":[{"token":"\#(token(1))","vars":{"name":"A"}},"\#(token(2))"],\#(templated)"#
        }
        let json = #"{"id":"j","app":"\#(app)",\#(fields)\#(dryRun ? #","dry_run":true"# : "")}"#
        return try decoder.decode(Array(json.utf8)).get()
    }

    /// The expected decision, stated per outcome rather than as `decide`'s chain of checks.
    static func expected(_ kind: Kind, dryRun: Bool, _ context: JobStart.Context) -> JobStart {
        let personalised = kind == .personalisedOne || kind == .personalisedSeveral
        let unsentReason: APNSOutcome.NoResponse? =
            context.expired ? .expired : context.cancelled ? .cancelled : (dryRun && !personalised) ? .dryRun : nil
        if let unsentReason { return .unsent(unsentReason) }
        if personalised { return .personalised(dryRun: dryRun) }
        if kind == .broadcast { return .broadcast }
        let groupable = kind == .oneToken && context.runMakesGroups && !context.resumed
        return groupable ? .joinsGroup : .ownBatch
    }

    @Test func everyCombinationTakesItsOneWay() throws {
        var seen: Set<JobStart> = []
        var combinations = 0
        for app in ["default", "other"] {
            for kind in Kind.allCases {
                for dryRun in [false, true] {
                    let job = try job(kind, dryRun: dryRun, app: app)
                    #expect(job.isPersonalised == (kind == .personalisedOne || kind == .personalisedSeveral))
                    for bits in 0..<16 {
                        let context = JobStart.Context(
                            expired: bits & 1 != 0,
                            cancelled: bits & 2 != 0,
                            runMakesGroups: bits & 4 != 0,
                            resumed: bits & 8 != 0
                        )
                        let decided = JobStart.decide(job, context)
                        #expect(decided == Self.expected(kind, dryRun: dryRun, context), "\(kind) dry \(dryRun) \(context)")
                        seen.insert(decided)
                        combinations += 1
                    }
                }
            }
        }
        #expect(combinations == 2 * 5 * 2 * 16)
        // Every way is taken by some combination.
        #expect(
            seen == [
                .unsent(.expired), .unsent(.cancelled), .unsent(.dryRun), .joinsGroup, .ownBatch, .broadcast,
                .personalised(dryRun: false), .personalised(dryRun: true),
            ]
        )
    }

    /// An expired job ends expired even when cancelled too (the deadline is the older fact), and
    /// a cancel wins over a rehearsal and over a broadcast.
    @Test func theUnsentReasonsInOrder() throws {
        let one = try job(.oneToken, dryRun: true, app: "default")
        #expect(JobStart.decide(one, .init(expired: true, cancelled: true)) == .unsent(.expired))
        #expect(JobStart.decide(one, .init(cancelled: true)) == .unsent(.cancelled))
        #expect(JobStart.decide(one, .init()) == .unsent(.dryRun))
        let broadcast = try job(.broadcast, dryRun: false, app: "default")
        #expect(JobStart.decide(broadcast, .init(cancelled: true)) == .unsent(.cancelled))
        #expect(JobStart.decide(broadcast, .init()) == .broadcast)
    }
}
