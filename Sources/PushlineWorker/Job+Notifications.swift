import PushlineAPNSCore

extension Job {
    /// The job's APNs notifications, one per recipient in `recipients` order: one per device
    /// token, or the one broadcast to the channel of the app `bundleID`.
    func notifications(bundleID: String, ids: APNSIDGenerator) -> [APNSNotification] {
        if let channelID {
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
        var notifications: [APNSNotification] = []
        notifications.reserveCapacity(tokens.count)
        for token in tokens {
            notifications.append(
                APNSNotification(
                    deviceToken: token,
                    topic: topic,
                    pushType: pushType,
                    priority: priority,
                    expiration: expiration,
                    collapseID: collapseID,
                    apnsID: ids.next(),
                    payload: payload
                )
            )
        }
        return notifications
    }

    /// A device-token job's notifications as one batch: the tokens' bytes and a block of ids
    /// reserved from `ids` (notification `i` is token `i`).
    func notificationBatch(ids: APNSIDGenerator) -> APNSNotificationBatch {
        var deviceTokens = APNSDeviceTokens()
        deviceTokens.reserveCapacity(tokens: tokens.count)
        for token in tokens { deviceTokens.append(token) }
        return APNSNotificationBatch(
            tokens: deviceTokens,
            ids: ids.reserve(tokens.count),
            topic: topic,
            pushType: pushType,
            priority: priority,
            expiration: expiration,
            collapseID: collapseID,
            payload: payload
        )
    }
}
