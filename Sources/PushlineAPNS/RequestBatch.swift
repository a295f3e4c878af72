import NIOCore
import PushlineAPNSCore

/// The notifications of one `APNSClient.send` call (a job's tokens), as one immutable, `Sendable`
/// allocation: its requests are addressed as (batch, index), and share one payload buffer when
/// their payloads are equal (the usual case: one job, one payload).
///
/// Nothing here changes after `init`: what changes while a request lives (attempts, times, holds)
/// is the pool machine's (`RequestState`), never the connection's.
final class RequestBatch: Sendable {
    /// Notifications given one by one (empty for a shared batch).
    let notifications: [APNSNotification]
    /// A batch that shares everything but tokens and ids, and its shared part as a notification
    /// (`APNSNotificationBatch.prototype`) for the header rules; nil for notifications given one
    /// by one. Stored properties, read in place: a request copies nothing of them.
    let shared: APNSNotificationBatch?
    let prototype: APNSNotification?
    let count: Int
    /// One buffer for every request (shared payload), or one per notification.
    private let bodies: [ByteBuffer]
    let options: APNSSendOptions
    let created: MonotonicInstant
    /// Called once per request with its index and final outcome.
    let completion: @Sendable (Int, APNSOutcome) -> Void

    init(
        notifications: [APNSNotification],
        options: APNSSendOptions,
        created: MonotonicInstant,
        completion: @escaping @Sendable (Int, APNSOutcome) -> Void
    ) {
        self.notifications = notifications
        shared = nil
        prototype = nil
        count = notifications.count
        self.options = options
        self.created = created
        self.completion = completion
        var bodies: [ByteBuffer] = []
        if let first = notifications.first {
            if notifications.allSatisfy({ $0.payload == first.payload }) {
                bodies = [ByteBuffer(bytes: first.payload)]
            } else {
                bodies = notifications.map { ByteBuffer(bytes: $0.payload) }
            }
        }
        self.bodies = bodies
    }

    init(
        batch: APNSNotificationBatch,
        options: APNSSendOptions,
        created: MonotonicInstant,
        completion: @escaping @Sendable (Int, APNSOutcome) -> Void
    ) {
        notifications = []
        shared = batch
        prototype = batch.prototype
        count = batch.count
        bodies = [ByteBuffer(bytes: batch.payload)]
        self.options = options
        self.created = created
        self.completion = completion
    }

    /// The request body of notification `index`.
    func body(at index: Int) -> ByteBuffer {
        bodies.count == 1 ? bodies[0] : bodies[index]
    }
}
