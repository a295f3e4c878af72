import PushlineAPNSCore

/// Everything that changes while one request lives, kept by the pool machine alone (in its
/// `RequestTable`): the machine counts attempts when it emits a send and learns the rest from
/// the plain values connections report (`StreamEnded`). The request itself, (batch, index), is
/// immutable.
struct RequestState {
    let batch: RequestBatch
    let index: Int
    /// Attempts that counted toward `maxAttempts` (counted when a send is emitted).
    var attempts = 0
    /// Resends that did not count (REFUSED_STREAM, GOAWAY-unprocessed, connection unavailable).
    var freeResends = 0
    /// When the first attempt was sent (latency in results is measured from here), as the
    /// connection reported it.
    var firstSentAt: MonotonicInstant?
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
    indirect enum SystemicAnswer {
        case response(APNSResponse)
        case noResponse(APNSOutcome.NoResponse)
    }

    init(batch: RequestBatch, index: Int) {
        self.batch = batch
        self.index = index
    }

    var options: APNSSendOptions { batch.options }

    func elapsedMilliseconds(at now: MonotonicInstant) -> Double {
        now.milliseconds(since: firstSentAt ?? batch.created)
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
