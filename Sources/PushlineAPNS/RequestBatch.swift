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
    /// The one buffer of every request when the payload is shared (no array for it)...
    private let sharedBody: ByteBuffer?
    /// ...or one per notification.
    private let bodies: [ByteBuffer]
    let options: APNSSendOptions
    let created: MonotonicInstant
    /// Hears each request's final outcome, once per index.
    let completion: Completion

    /// Who hears the outcomes: a closure, or an object the caller already has.
    enum Completion: Sendable {
        case closure(@Sendable (Int, APNSOutcome) -> Void)
        /// The observer hears request `i` as `firstIndex + i`.
        case observer(any APNSBatchObserver, firstIndex: Int)
    }

    init(
        notifications: [APNSNotification],
        options: APNSSendOptions,
        created: MonotonicInstant,
        completion: Completion
    ) {
        self.notifications = notifications
        shared = nil
        prototype = nil
        count = notifications.count
        self.options = options
        self.created = created
        self.completion = completion
        if let first = notifications.first, notifications.allSatisfy({ $0.payload == first.payload }) {
            sharedBody = ByteBuffer(bytes: first.payload)
            bodies = []
        } else {
            sharedBody = nil
            bodies = notifications.map { ByteBuffer(bytes: $0.payload) }
        }
    }

    init(
        batch: APNSNotificationBatch,
        options: APNSSendOptions,
        created: MonotonicInstant,
        completion: Completion
    ) {
        notifications = []
        shared = batch
        prototype = batch.prototype
        count = batch.count
        sharedBody = ByteBuffer(bytes: batch.payload)
        bodies = []
        self.options = options
        self.created = created
        self.completion = completion
    }

    /// The request body of notification `index`.
    func body(at index: Int) -> ByteBuffer {
        sharedBody ?? bodies[index]
    }

    /// Tells whoever hears the batch that request `index` ended with `outcome`.
    func ended(_ index: Int, outcome: APNSOutcome) {
        switch completion {
        case .closure(let completion): completion(index, outcome)
        case .observer(let observer, let firstIndex): observer.notificationEnded(firstIndex + index, outcome: outcome)
        }
    }
}
