import NIOCore
import PushlineAPNSCore

/// The notifications of one `APNSClient.send` call (a job's tokens), as one immutable, `Sendable`
/// allocation: its requests are addressed as (batch, index), and share one payload buffer when
/// their payloads are equal (the usual case: one job, one payload).
///
/// Nothing here changes after `init`: what changes while a request lives (attempts, times, holds)
/// is the pool machine's (`RequestState`), never the connection's.
final class RequestBatch: Sendable {
    let notifications: [APNSNotification]
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

    var count: Int { notifications.count }

    /// The request body of notification `index`.
    func body(at index: Int) -> ByteBuffer {
        bodies.count == 1 ? bodies[0] : bodies[index]
    }
}
