import NIOCore
import PushlineAPNSCore

/// One notification on its way through the pool, across attempts and connections.
///
/// `@unchecked Sendable`: a request is owned by exactly one party at a time: the pool's state
/// machine (under the pool's lock: queued, waiting to retry, or held), or one connection's event
/// loop from the hand-over until its stream ends and it is reported back under the lock. Each
/// hand-over goes through the lock or `EventLoop.execute`, which order the accesses. Nothing
/// reads a request's fields while another party owns it (a connection's deadline sweep keeps
/// stream ids of its own, see `SendOrder`).
final class PendingRequest: @unchecked Sendable {
    let notification: APNSNotification
    let body: ByteBuffer
    let options: APNSSendOptions
    /// The request's position in the batch it was sent with, passed to `completion`.
    let index: Int
    let completion: @Sendable (Int, APNSOutcome) -> Void
    let created: MonotonicInstant
    /// Attempts that counted toward `maxAttempts`.
    var attempts = 0
    /// Resends that did not count (REFUSED_STREAM, GOAWAY-unprocessed, connection unavailable).
    var freeResends = 0
    /// The provider token sent on the current attempt.
    var bearerToken: String?
    /// When the first attempt was sent (latency in results is measured from here), and the
    /// current one (APNs latency metrics).
    var firstSentAt: MonotonicInstant?
    var sentAt: MonotonicInstant?
    /// A connection to avoid on the next attempt (it answered 503).
    var avoidSlot: Int?
    /// When a retry after backoff may go (while in the machine's retry list).
    var retryAt: MonotonicInstant?
    /// This request is its held app's probe.
    var isProbe = false
    /// ExpiredProviderToken answers that led to a token refresh and resend.
    var tokenRefreshes = 0
    /// When this request first waited in a hold, and the last systemic answer it got.
    var heldSince: MonotonicInstant?
    var lastSystemic: SystemicAnswer?

    /// A systemic answer, kept for the record a hold that ends in failure publishes.
    enum SystemicAnswer {
        case response(APNSResponse)
        case noResponse(APNSOutcome.NoResponse)
    }

    /// - Parameter body: the payload as a buffer, when the caller already has one (the requests of
    ///   one job share it instead of copying the payload per token).
    init(
        notification: APNSNotification,
        options: APNSSendOptions,
        body: ByteBuffer? = nil,
        index: Int,
        created: MonotonicInstant = .now,
        completion: @escaping @Sendable (Int, APNSOutcome) -> Void
    ) {
        self.index = index
        self.notification = notification
        self.body = body ?? ByteBuffer(bytes: notification.payload)
        self.options = options
        self.completion = completion
        self.created = created
    }

    func elapsedMilliseconds(at now: MonotonicInstant) -> Double {
        now.milliseconds(since: firstSentAt ?? created)
    }

    /// How long this request has waited in holds, in milliseconds (nil when never held).
    func heldMilliseconds(at now: MonotonicInstant) -> Double? {
        heldSince.map { now.milliseconds(since: $0) }
    }

    func outcome(_ response: APNSResponse, at now: MonotonicInstant) -> APNSOutcome {
        var outcome = APNSOutcome(response: response, attempts: attempts, latencyMilliseconds: elapsedMilliseconds(at: now))
        outcome.heldMilliseconds = heldMilliseconds(at: now)
        return outcome
    }

    func outcome(_ noResponse: APNSOutcome.NoResponse, at now: MonotonicInstant) -> APNSOutcome {
        var outcome = APNSOutcome(noResponse: noResponse, attempts: attempts, latencyMilliseconds: elapsedMilliseconds(at: now))
        outcome.heldMilliseconds = heldMilliseconds(at: now)
        return outcome
    }

    /// The outcome of a hold that ended in failure: the last systemic answer, and how long it was held.
    func outcomeOfLastSystemicAnswer(at now: MonotonicInstant) -> APNSOutcome {
        switch lastSystemic {
        case .response(let response)?: outcome(response, at: now)
        case .noResponse(let reason)?: outcome(reason, at: now)
        case nil: outcome(.connection, at: now)
        }
    }
}

extension Duration {
    /// The duration in milliseconds, with fractions.
    var milliseconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) * 1000 + Double(attoseconds) / 1e15
    }
}
