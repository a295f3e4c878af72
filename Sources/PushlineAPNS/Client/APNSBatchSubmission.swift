import PushlineAPNSCore

/// One batch of `APNSClient.send(contentsOf:)`: its notifications, options, and who hears their
/// outcomes.
public struct APNSBatchSubmission: Sendable {
    public var batch: APNSNotificationBatch
    public var options: APNSSendOptions
    public var observer: any APNSBatchObserver
    /// What the observer hears as notification 0's index: notification `i` ends as
    /// `firstIndex + i`, so that one observer can hear many batches (a group of single-token
    /// jobs, one index each).
    public var firstIndex: Int

    public init(
        batch: APNSNotificationBatch,
        options: APNSSendOptions = APNSSendOptions(),
        observer: any APNSBatchObserver,
        firstIndex: Int = 0
    ) {
        self.batch = batch
        self.options = options
        self.observer = observer
        self.firstIndex = firstIndex
    }
}
