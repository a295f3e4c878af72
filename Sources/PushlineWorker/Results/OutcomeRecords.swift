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
        var records = others(job: job, index: index, outcome: outcome, environment: environment, rules: rules) ?? OutcomeRecords()
        if wantsDelivery(outcome, rules: rules) {
            var delivery = ResultRecord.Delivery(
                jobID: job.id,
                recipient: recipient(job: job, index: index),
                app: job.app,
                status: outcome.status,
                reason: outcome.reasonString,
                apnsID: nil,
                apnsUniqueID: outcome.response?.apnsUniqueID,
                timestamp: outcome.response?.timestamp,
                attempts: outcome.attempts,
                latencyMilliseconds: outcome.latencyMilliseconds,
                heldMilliseconds: outcome.heldMilliseconds,
                source: source,
                echo: job.echo
            )
            delivery.recordAPNSID = recordAPNSID(outcome, sent: apnsID)
            records.delivery = delivery
        }
        return records
    }

    /// Whether `outcome` gets a delivery record: always in full mode, only when it was not
    /// delivered in compact mode.
    static func wantsDelivery(_ outcome: APNSOutcome, rules: OutcomeRules) -> Bool {
        rules.mode == .full || !(200...299).contains(outcome.status)
    }

    /// What a delivery record names: token `index` of the job, or its broadcast's channel.
    static func recipient(job: Job, index: Int) -> ResultRecord.Delivery.Recipient {
        job.channelID.map { .channel($0) } ?? .deviceToken(job.deviceTokens, index: index)
    }

    /// The `apns-id` a delivery record gives: APNs' own when it answered with one, else the one
    /// the request was sent with.
    static func recordAPNSID(_ outcome: APNSOutcome, sent: RecordAPNSID?) -> RecordAPNSID? {
        outcome.response?.apnsID.map { .text($0) } ?? sent
    }

    /// The records besides the delivery record (`delivery` is nil): a dead token's
    /// `token_invalidated`, a missing channel's `channel_gone`. The pipeline writes the delivery
    /// record straight from the outcome (`DeliveryRecordTemplate.encode(job:index:apnsID:outcome:)`),
    /// with no `ResultRecord.Delivery` value in between. nil when there are none: an outcome
    /// without a reason (a 2xx, nearly every one) has neither, and most with a reason (an expired
    /// token, a 400) have neither too. No empty value is made, copied and destroyed for them (448
    /// bytes, copied three times: about 2% of the worker at 100 tokens per job, every token
    /// expired).
    static func others(
        job: Job,
        index: Int,
        outcome: APNSOutcome,
        environment: @autoclosure () -> String,
        rules: OutcomeRules
    ) -> OutcomeRecords? {
        // Both need a reason (a 2xx has none).
        guard let reason = outcome.reasonString else { return nil }
        let invalidates = job.channelID == nil && outcome.status == 410 && rules.invalidateOn.contains(reason)
        let channelGone = job.channelID != nil && reason == APNSReason.channelNotRegistered.rawValue
        guard invalidates || channelGone else { return nil }
        var records = OutcomeRecords()
        if invalidates {
            // Apple's reason verbatim: `Unregistered` in `invalidate_on` covers `ExpiredToken` too,
            // but the record says which one APNs gave.
            records.invalidation = ResultRecord.TokenInvalidated(
                token: job.deviceTokens.token(at: index),
                app: job.app,
                topic: job.topic,
                reason: reason,
                invalidSince: outcome.response?.timestamp,
                jobID: job.id,
                environment: environment(),
                echo: job.echo
            )
        }
        if channelGone, let channelID = job.channelID {
            records.channelGone = ResultRecord.ChannelGone(
                channelID: channelID,
                app: job.app,
                reason: APNSReason.channelNotRegistered.rawValue,
                jobID: job.id,
                echo: job.echo
            )
        }
        return records
    }
}
