import PushlineAPNSCore

/// What hears a batch's outcomes (`APNSClient.send(contentsOf:)`): an object the caller
/// already has (a job's progress, say), so a batch costs no closure context of its own.
public protocol APNSBatchObserver: AnyObject, Sendable {
    /// Notification `index` of the batch (offset by its submission's `firstIndex`) has its final
    /// outcome; called once per index, on an event loop.
    func notificationEnded(_ index: Int, outcome: APNSOutcome)

    /// What a cancel picks notification `index` by (`APNSClient.cancel(where:)`); nil: no
    /// cancel can pick it. Required, so that no kind of work escapes cancels by omission. Asked
    /// under the pool's lock, only when a cancel runs or a picked request would go again: it
    /// must be quick and must not call the pool.
    func cancelKey(_ index: Int) -> APNSCancelKey?
}
