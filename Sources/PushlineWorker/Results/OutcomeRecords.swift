import PushlineAPNSCore

/// The result records one token's (one broadcast's) final outcome produces, with their fields:
/// decided here, without I/O; the pipeline encodes and publishes them and records the metrics.
struct OutcomeRecords: Sendable, Hashable {
    /// The delivery record (results topic, key = job id); nil when the mode leaves it out.
    var delivery: ResultRecord.Delivery?
    /// A dead token (results topic, and the invalidations topic when set; key = token).
    var invalidation: ResultRecord.TokenInvalidated?
    /// A broadcast's channel that does not exist (both topics too; key = channel id).
    var channelGone: ResultRecord.ChannelGone?

    /// - Parameters:
    ///   - index: which of the job's device tokens (0 for a broadcast's channel).
    ///   - apnsID: the `apns-id` the request was sent with (nil when it never was); APNs' own
    ///     answer, when it gave one, wins.
    ///   - environment: the APNs environment of the job's app (`production`, `sandbox`, `custom`).
    static func decide(
        job: Job,
        index: Int,
        apnsID: RecordAPNSID?,
        outcome: APNSOutcome,
        source: RecordSource,
        environment: String,
        rules: OutcomeRules
    ) -> OutcomeRecords {
        let reason = outcome.reasonString
        var records = OutcomeRecords()
        let delivered = (200...299).contains(outcome.status)
        if rules.mode == .full || !delivered {
            var delivery = ResultRecord.Delivery(
                jobID: job.id,
                recipient: job.channelID.map { .channel($0) } ?? .deviceToken(job.deviceTokens, index: index),
                app: job.app,
                status: outcome.status,
                reason: reason,
                apnsID: nil,
                apnsUniqueID: outcome.response?.apnsUniqueID,
                timestamp: outcome.response?.timestamp,
                attempts: outcome.attempts,
                latencyMilliseconds: outcome.latencyMilliseconds,
                heldMilliseconds: outcome.heldMilliseconds,
                source: source,
                meta: job.meta
            )
            delivery.recordAPNSID = outcome.response?.apnsID.map { .text($0) } ?? apnsID
            records.delivery = delivery
        }
        if job.channelID == nil, outcome.status == 410, let reason, rules.invalidateOn.contains(reason) {
            // Apple's reason verbatim: `Unregistered` in `invalidate_on` covers `ExpiredToken` too,
            // but the record says which one APNs gave.
            records.invalidation = ResultRecord.TokenInvalidated(
                token: job.deviceTokens.token(at: index),
                app: job.app,
                topic: job.topic,
                reason: reason,
                invalidSince: outcome.response?.timestamp,
                jobID: job.id,
                environment: environment,
                meta: job.meta
            )
        }
        if let channelID = job.channelID, reason == APNSReason.channelNotRegistered.rawValue {
            records.channelGone = ResultRecord.ChannelGone(
                channelID: channelID,
                app: job.app,
                reason: APNSReason.channelNotRegistered.rawValue,
                jobID: job.id,
                meta: job.meta
            )
        }
        return records
    }
}
