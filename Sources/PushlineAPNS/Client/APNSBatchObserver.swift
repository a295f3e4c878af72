import PushlineAPNSCore

/// What hears a batch's outcomes (`APNSClient.send(contentsOf:)`): an object the caller
/// already has (a job's progress, say), so a batch costs no closure context of its own.
public protocol APNSBatchObserver: AnyObject, Sendable {
    /// Notification `index` of the batch (offset by its submission's `firstIndex`) has its final
    /// outcome; called once per index, on an event loop.
    func notificationEnded(_ index: Int, outcome: APNSOutcome)
}
