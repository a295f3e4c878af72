import APNSCore
import NIOCore

/// One notification on its way through the pool, across attempts and connections.
///
/// `@unchecked Sendable`: a request is owned by exactly one party at a time — the pool's queue
/// (under its lock), one connection's event loop while its stream is open, or a scheduled retry —
/// and each hand-over goes through the lock or `EventLoop.execute`, which order the accesses.
final class PendingRequest: @unchecked Sendable {
    let notification: APNSNotification
    let body: ByteBuffer
    let options: APNSSendOptions
    /// The request's position in the batch it was sent with, passed to `completion`.
    let index: Int
    let completion: @Sendable (Int, APNSOutcome) -> Void
    let created: ContinuousClock.Instant
    /// Attempts that counted toward `maxAttempts`.
    var attempts = 0
    /// Resends that did not count (REFUSED_STREAM, GOAWAY-unprocessed, connection unavailable).
    var freeResends = 0
    /// The provider token sent on the current attempt.
    var bearerToken: String?
    /// How many times the request was submitted on a stream (attempts and free resends).
    var sends = 0
    /// The stream on the current connection while it is open (nil otherwise). Its deadline lives
    /// in the connection's `SendOrder`, read by one sweep per connection, not a timer per request.
    var streamID: Int32?
    var timedOut = false
    /// When the first attempt was sent (latency in results is measured from here), and the
    /// current one (APNs latency metrics).
    var firstSentAt: ContinuousClock.Instant?
    var sentAt: ContinuousClock.Instant?
    /// A connection to avoid on the next attempt (it answered 503).
    var avoidSlot: Int?

    /// - Parameter body: the payload as a buffer, when the caller already has one (the requests of
    ///   one job share it instead of copying the payload per token).
    init(
        notification: APNSNotification,
        options: APNSSendOptions,
        body: ByteBuffer? = nil,
        index: Int,
        completion: @escaping @Sendable (Int, APNSOutcome) -> Void
    ) {
        self.index = index
        self.notification = notification
        self.body = body ?? ByteBuffer(bytes: notification.payload)
        self.options = options
        self.completion = completion
        self.created = .now
    }

    func elapsedMilliseconds(at now: ContinuousClock.Instant = .now) -> Double {
        let elapsed = now - (firstSentAt ?? created)
        return Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
    }

    /// - Parameter now: when the response arrived (the caller usually read the clock already).
    func finish(response: APNSResponse, at now: ContinuousClock.Instant = .now) {
        completion(index, APNSOutcome(response: response, attempts: attempts, latencyMilliseconds: elapsedMilliseconds(at: now)))
    }

    func finish(noResponse: APNSOutcome.NoResponse) {
        completion(index, APNSOutcome(noResponse: noResponse, attempts: attempts, latencyMilliseconds: elapsedMilliseconds()))
    }
}
