import PushlineAPNSCore

/// One batch of `APNSClient.send(contentsOf:)`: its notifications, options, and who hears their
/// outcomes.
public struct APNSBatchSubmission: Sendable {
    public var batch: APNSNotificationBatch
    public var options: APNSSendOptions
    public var observer: any APNSBatchObserver

    public init(batch: APNSNotificationBatch, options: APNSSendOptions = APNSSendOptions(), observer: any APNSBatchObserver) {
        self.batch = batch
        self.options = options
        self.observer = observer
    }
}
