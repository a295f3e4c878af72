import PushlineAPNS
import PushlineAPNSCore

/// What the pipeline needs of an app's APNs client: `APNSClient`, or a test's fake (outcomes
/// told when the test says). Called once per app per intake run, and once per broadcast: never
/// per notification.
protocol NotificationSender: AnyObject, Sendable {
    /// The APNs environment (`token_invalidated` records name it).
    var apnsEnvironment: String { get }
    /// Sends the device-token batches of a run; each observer hears its notifications' outcomes.
    func send(contentsOf submissions: consuming [APNSBatchSubmission])
    /// Sends a broadcast's notifications; `observer` hears each one's outcome (and a cancel sees
    /// it: `BroadcastObserver`).
    func send(_ notifications: [APNSNotification], options: APNSSendOptions, observer: any APNSBatchObserver)
    /// Ends the waiting requests `filter` picks as `cancelled` (`APNSClient.cancel(where:)`);
    /// returns how many ended now. After a cancel only: never per notification.
    @discardableResult
    func cancel(where filter: @escaping APNSCancelFilter) -> Int
}

extension APNSClient: NotificationSender {
    var apnsEnvironment: String { configuration.endpoint.environment }
}
