import PushlineAPNSCore

@testable import PushlineWorker

/// The other result records `encodedRecordsMatchTheirSchemas` checks: token invalidations and
/// gone channels (with and without the sender's meta and campaign), and job summaries.
extension RecordSchemaTests {
    /// Invalidations, as the pipeline makes them (ExpiredToken reported as itself when only it is
    /// in worker.invalidate_on), then with the sender's campaign and meta.
    static func invalidationRecords(token: String, meta: [UInt8]) -> [[UInt8]] {
        let invalidationsWithoutMeta = [
            ResultRecord.tokenInvalidated(
                .init(
                    token: token,
                    app: "default",
                    topic: "com.example.app",
                    reason: "Unregistered",
                    invalidSince: 1_790_000_000_000,
                    jobID: "c42-17",
                    environment: "production"
                )
            ),
            ResultRecord.tokenInvalidated(
                .init(
                    token: "00ff",
                    app: "news",
                    topic: "com.example.news.voip",
                    reason: "ExpiredToken",
                    invalidSince: nil,
                    jobID: "j\"1",
                    environment: "sandbox"
                )
            ),
            ResultRecord.tokenInvalidated(
                .init(
                    token: "00ff",
                    app: "mock",
                    topic: "com.example.app",
                    reason: "Unregistered",
                    invalidSince: 1,
                    jobID: "j2",
                    environment: "custom"
                )
            ),
        ].map { $0.encoded() }
        let invalidations =
            invalidationsWithoutMeta + [
                ResultRecord.tokenInvalidated(
                    .init(
                        token: token,
                        app: "default",
                        topic: "com.example.app",
                        reason: "Unregistered",
                        invalidSince: 1,
                        jobID: "cp-1",
                        environment: "custom",
                        echo: JobEcho(campaign: "spring", meta: meta)
                    )
                ).encoded()
            ] + [
                ResultRecord.tokenInvalidated(
                    .init(
                        token: token,
                        app: "default",
                        topic: "com.example.app",
                        reason: "Unregistered",
                        invalidSince: 1,
                        jobID: "m-1",
                        environment: "custom",
                        echo: JobEcho(meta: meta)
                    )
                ).encoded()
            ]
        return invalidations
    }

    /// Gone channels, without and then with the sender's meta and campaign.
    static func channelGoneRecords(meta: [UInt8]) -> [[UInt8]] {
        let goneWithoutMeta = [
            ResultRecord.channelGone(
                .init(channelID: "dHN0LXNyY2gtY2hubA==", app: "default", reason: "ChannelNotRegistered", jobID: "la-9")
            ),
            ResultRecord.channelGone(.init(channelID: "a+b/\"c\\", app: "news \"x\"", reason: "ChannelNotRegistered", jobID: "j\n1")),
        ].map { $0.encoded() }
        let gone =
            goneWithoutMeta + [
                ResultRecord.channelGone(
                    .init(channelID: "AAAA", app: "default", reason: "ChannelNotRegistered", jobID: "m-1", echo: JobEcho(meta: meta))
                )
                .encoded(),
                ResultRecord.channelGone(
                    .init(
                        channelID: "AAAA",
                        app: "default",
                        reason: "ChannelNotRegistered",
                        jobID: "cp-1",
                        echo: JobEcho(campaign: "spring")
                    )
                ).encoded(),
            ]
        return gone
    }

    /// Job summaries: tokens and broadcasts, held or not, never sent, with and without meta.
    static func jobDoneRecords(source: RecordSource, token: String, meta: [UInt8]) -> [[UInt8]] {
        var done: [[UInt8]] = []
        var tally = JobTally()
        tally.add(status: 200, reason: nil, attempts: 1, latencyMilliseconds: 3.2, heldMilliseconds: nil, answeredAt: 1_790_000_000_100)
        tally.add(
            status: 410,
            reason: "Unregistered",
            attempts: 2,
            latencyMilliseconds: 9,
            heldMilliseconds: 12.5,
            answeredAt: 1_790_000_000_120
        )
        tally.add(
            status: 0,
            reason: "timeout",
            attempts: 5,
            latencyMilliseconds: 10_000,
            heldMilliseconds: nil,
            answeredAt: 1_790_000_010_000
        )
        tally.add(
            status: 400,
            reason: "SomeFutureReason",
            attempts: 1,
            latencyMilliseconds: 1,
            heldMilliseconds: nil,
            answeredAt: 1_790_000_000_001
        )
        let tokensJob = Job(
            id: "c42-17",
            tokens: [token, token, token, token],
            app: "default",
            topic: "com.example.app",
            pushType: .alert,
            priority: .immediate,
            payload: []
        )
        done.append(ResultRecord.jobDone(tally.record(for: tokensJob, source: source)).encoded())
        var withMetaJob = tokensJob
        withMetaJob.meta = meta
        done.append(ResultRecord.jobDone(tally.record(for: withMetaJob, source: source)).encoded())
        var withCampaignJob = withMetaJob
        withCampaignJob.campaign = "spring"
        done.append(ResultRecord.jobDone(tally.record(for: withCampaignJob, source: source)).encoded())
        var neverSent = JobTally()
        neverSent.add(
            status: 0,
            reason: "expired",
            attempts: 0,
            latencyMilliseconds: 0,
            heldMilliseconds: nil,
            answeredAt: 1_790_000_000_000
        )
        var broadcastJob = tokensJob
        broadcastJob.tokens = []
        broadcastJob.channelID = "dHN0LXNyY2gtY2hubA=="
        done.append(ResultRecord.jobDone(neverSent.record(for: broadcastJob, source: source)).encoded())
        return done
    }
}
