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
}
