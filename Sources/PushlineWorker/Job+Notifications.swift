import PushlineAPNS
import PushlineAPNSCore

extension Job {
    /// A broadcast job's one notification, to the channel of the app `bundleID` (device-token
    /// jobs go as one `notificationBatch`).
    func broadcastNotifications(bundleID: String, ids: APNSIDGenerator) -> [APNSNotification] {
        guard let channelID else { preconditionFailure("job \(id) has no channel: send it as a notification batch") }
        return [
            .broadcast(
                channelID: channelID,
                bundleID: bundleID,
                priority: priority,
                expiration: expiration,
                requestID: ids.next(),
                payload: payload
            )
        ]
    }

    /// A device-token job's notifications as one batch: the tokens' bytes and a block of ids
    /// reserved from `ids` (notification `i` is token `i`).
    func notificationBatch(ids: APNSIDGenerator) -> APNSNotificationBatch {
        notificationBatch(ids: ids.reserve(deviceTokens.count))
    }

    /// The same with the ids `ids` (one per token).
    func notificationBatch(ids: APNSIDBlock) -> APNSNotificationBatch {
        // The job's own token bytes: shared, not copied.
        APNSNotificationBatch(
            tokens: deviceTokens,
            ids: ids,
            topic: topic,
            pushType: pushType,
            priority: priority,
            expiration: expiration,
            collapseID: requestCollapseID,
            payload: payload
        )
    }
}

extension Job {
    /// A personalised job's requests, its payloads rendered (`rendered`): a batch per run of
    /// rendered tokens (one for the whole job when every token rendered, its token bytes shared),
    /// each heard by `observer` at its tokens' own indices; token `i` has id `i` of `ids` (one per
    /// token of the job; those of unrendered tokens go unused).
    func personalisedSubmissions(
        _ rendered: RenderedPayloads,
        ids: APNSIDBlock,
        options: APNSSendOptions,
        observer: any APNSBatchObserver
    ) -> [APNSBatchSubmission] {
        let all = deviceTokens
        return rendered.runs.map { run in
            var tokens = all
            if run.tokens.count != all.count {
                tokens = APNSDeviceTokens()
                for index in run.tokens { all.withToken(at: index) { tokens.append(bytes: $0) } }
            }
            var batch = APNSNotificationBatch(
                tokens: tokens,
                ids: ids.slice(run.tokens),
                topic: topic,
                pushType: pushType,
                priority: priority,
                expiration: expiration,
                collapseID: requestCollapseID,
                payload: []
            )
            batch.payloadBuffer = rendered.payloads.slice(run.firstPayload..<(run.firstPayload + run.tokens.count))
            return APNSBatchSubmission(batch: batch, options: options, observer: observer, firstIndex: run.tokens.lowerBound)
        }
    }
}
