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
