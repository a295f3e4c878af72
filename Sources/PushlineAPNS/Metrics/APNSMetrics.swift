import Metrics
import Synchronization

/// The client's metrics (swift-metrics): responses by status and reason, latency, JWT refreshes,
/// free resends, and the app's systemic hold. Metric objects are created once per label set and
/// cached, so recording stays cheap.
final class APNSMetrics: Sendable {
    let app: String
    private let responses = Mutex<[ResponseKey: Counter]>([:])
    /// The common answer, counted without a look-up.
    private let ok: Counter
    /// Per answer; a connection counts a read batch's in place (`TimerTally`).
    let latency: HistogramTimer
    private let refreshes: Counter
    private let resends: Counter
    private let heldGauge: Gauge
    private let heldRequests: Counter

    struct ResponseKey: Hashable {
        var status: Int
        var reason: String
    }

    /// - Parameter maxRate: the configured pace, exported as `pushline_app_max_rate` (0 = none);
    ///   the actual rate is `rate(pushline_apns_responses_total)`.
    init(app: String, maxRate: Int? = nil) {
        self.app = app
        latency = HistogramTimer(label: "pushline_apns_latency_seconds", dimensions: [("app", app)])
        refreshes = Counter(label: "pushline_jwt_refreshes_total", dimensions: [("app", app)])
        resends = Counter(label: "pushline_apns_free_resends_total", dimensions: [("app", app)])
        ok = Counter(label: "pushline_apns_responses_total", dimensions: [("app", app), ("status", "200"), ("reason", "")])
        heldGauge = Gauge(label: "pushline_app_held", dimensions: [("app", app)])
        heldRequests = Counter(label: "pushline_apns_held_requests_total", dimensions: [("app", app)])
        heldGauge.record(0)
        Gauge(label: "pushline_app_max_rate", dimensions: [("app", app)]).record(maxRate ?? 0)
    }

    /// `count` answers 200 with no reason (a connection's read batch, counted in place).
    func okResponses(_ count: Int) {
        ok.increment(by: count)
    }

    /// An answer that is not a plain 200.
    func otherResponse(status: Int, reason: String?) {
        let key = ResponseKey(status: status, reason: reason ?? "")
        let counter = responses.withLock { cache in
            if let counter = cache[key] { return counter }
            let counter = Counter(
                label: "pushline_apns_responses_total",
                dimensions: [("app", app), ("status", String(status)), ("reason", key.reason)]
            )
            cache[key] = counter
            return counter
        }
        counter.increment()
    }

    func jwtRefreshed() {
        refreshes.increment()
    }

    func freeResends(_ count: Int) {
        resends.increment(by: count)
    }

    /// The app's hold started (true) or ended (false).
    func held(_ isHeld: Bool) {
        heldGauge.record(isHeld ? 1 : 0)
    }

    /// Requests that got a systemic answer while held, and were requeued instead of finalized.
    func requestsHeld(_ count: Int) {
        heldRequests.increment(by: count)
    }
}
