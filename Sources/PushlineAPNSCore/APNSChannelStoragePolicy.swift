/// A broadcast channel's `message-storage-policy`, fixed when the channel is created.
public enum APNSChannelStoragePolicy: Int, Sendable, Hashable, CaseIterable {
    /// 0: no message is stored; a higher send budget, and every broadcast's `apns-expiration`
    /// must be 0.
    case noStorage = 0
    /// 1: the most recent message is stored (up to 8 hours) for devices that were offline.
    case mostRecentMessage = 1

    /// Whether a broadcast with this `apns-expiration` may go to a channel with this policy.
    public func allows(expiration: Int64) -> Bool {
        self == .mostRecentMessage || expiration == 0
    }
}
