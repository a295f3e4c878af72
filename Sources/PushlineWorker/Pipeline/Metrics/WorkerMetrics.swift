import Metrics
import PushlineAPNS
import PushlineAPNSCore
import Synchronization

/// The worker's metrics (names in docs/operations.md). Label sets are cached so that recording a
/// result costs at most a dictionary look-up and an atomic add (a delivered one, no look-up).
final class WorkerMetrics: Sendable {
    private struct NotificationKey: Hashable {
        var app: String
        var status: Int
        var reason: String
    }

    private let notifications = Mutex<[NotificationKey: Counter]>([:])
    private let invalidations = Mutex<[String: Counter]>([:])
    private let rejects = Mutex<[String: Counter]>([:])
    private let jobsCompleted = Counter(label: "pushline_jobs_total", dimensions: [("outcome", "completed")])
    private let jobsRejected = Counter(label: "pushline_jobs_total", dimensions: [("outcome", "rejected")])
    private let retries = Counter(label: "pushline_produce_retries_total")
    let inflight = Gauge(label: "pushline_inflight_notifications")
    let pausedPartitions = Gauge(label: "pushline_paused_partitions")
    let producerQueueDepth = Gauge(label: "pushline_producer_queue_depth")
    let window = Gauge(label: "pushline_inflight_window")
    let queueDelay = Gauge(label: "pushline_queue_delay_seconds")
    let sendRate = Gauge(label: "pushline_send_rate")
    let uncommitted = Gauge(label: "pushline_uncommitted_notifications")
    let assignedPartitions = Gauge(label: "pushline_assigned_partitions")
    /// Records of partitions lost and back (docs/kafka.md, "A lost assignment keeps finished
    /// work"): skipped, their results in Kafka already; resumed, sent to their unanswered tokens
    /// only; and memories of lost partitions forgotten.
    let lostRecordsSkipped = Counter(label: "pushline_lost_records_total", dimensions: [("outcome", "skipped")])
    let lostRecordsResumed = Counter(label: "pushline_lost_records_total", dimensions: [("outcome", "resumed")])
    let lostPartitionsForgotten = Counter(label: "pushline_lost_partitions_forgotten_total")

    init() {}

    /// One app's per-notification metrics, made once per app: a job looks them up once and its
    /// tokens record through them, the common outcome (200) without any look-up.
    final class AppMetrics: Sendable {
        let app: String
        let delivered: Counter
        let endToEnd: HistogramTimer
        fileprivate let apnsRetries: Counter
        /// Notifications ended as cancelled (`pushline_cancelled_total{app}`).
        fileprivate let cancelled: Counter
        /// The app's other outcomes' counters seen so far, by status and reason: found by a scan of
        /// a few entries (two integer compares for a short reason) instead of hashing two strings.
        fileprivate let others = Mutex<[(status: Int, reason: String, counter: Counter)]>([])

        fileprivate init(app: String) {
            self.app = app
            delivered = Counter(label: "pushline_notifications_total", dimensions: [("app", app), ("status", "200"), ("reason", "")])
            endToEnd = HistogramTimer(label: "pushline_end_to_end_latency_seconds", dimensions: [("app", app)])
            apnsRetries = Counter(label: "pushline_retries_total", dimensions: [("app", app), ("kind", "apns")])
            cancelled = Counter(label: "pushline_cancelled_total", dimensions: [("app", app)])
        }
    }

    private let apps = Mutex<[String: AppMetrics]>([:])
    private static let cancelledReason = APNSOutcome.NoResponse.cancelled.rawValue

    /// One lane's metrics: notifications finished, how long they waited in the worker before
    /// their first send, and how old a job's record was when its last result went out.
    final class LaneMetrics: Sendable {
        fileprivate let notifications: Counter
        let queueDelay: HistogramTimer
        fileprivate let resultAge: Timer

        fileprivate init(lane: SendLane) {
            let dimensions = [("lane", lane.rawValue)]
            notifications = Counter(label: "pushline_lane_notifications_total", dimensions: dimensions)
            queueDelay = HistogramTimer(label: "pushline_lane_queue_delay_seconds", dimensions: dimensions)
            resultAge = Timer(label: "pushline_lane_result_age_seconds", dimensions: dimensions, preferredDisplayUnit: .seconds)
        }
    }

    let bulk = LaneMetrics(lane: .bulk)
    let urgent = LaneMetrics(lane: .urgent)

    func lane(_ lane: SendLane) -> LaneMetrics {
        lane == .urgent ? urgent : bulk
    }

    /// A notification of `lane` waited `nanoseconds` (at least 0) before its first send: for the
    /// lane's histogram and `meter`'s average. In a run, counted there and recorded when the run
    /// ends.
    func queueDelay(_ lane: LaneMetrics, nanoseconds: Int64, meter: QueueDelayMeter, run: ResultBatch?) {
        if let run {
            run.metrics.queueDelay(nanoseconds, lane: lane.queueDelay, meter: meter)
        } else {
            meter.add(nanoseconds: nanoseconds)
            lane.queueDelay.recordNanoseconds(nanoseconds)
        }
    }

    /// A job of `lane` finished with `notifications`; `resultAgeMilliseconds` is the time since
    /// its record was produced (nil: unknown). Once per job: counters and histograms cost.
    func laneJobCompleted(_ lane: LaneMetrics, notifications: Int, resultAgeMilliseconds: Int64?) {
        lane.notifications.increment(by: notifications)
        if let resultAgeMilliseconds { laneResultAge(lane, milliseconds: resultAgeMilliseconds) }
    }

    /// How old a finished job's record was when its results were all in Kafka (`laneJobCompleted`
    /// counts its notifications; a group counts its members' once, then each one's age here).
    func laneResultAge(_ lane: LaneMetrics, milliseconds: Int64) {
        lane.resultAge.recordNanoseconds(max(0, milliseconds) * 1_000_000)
    }

    func app(_ name: String) -> AppMetrics {
        apps.withLock { cache in
            if let metrics = cache[name] { return metrics }
            let metrics = AppMetrics(app: name)
            cache[name] = metrics
            return metrics
        }
    }

    /// A notification's final outcome. In a run, the common metrics are counted there and
    /// recorded when the run ends.
    func notification(
        _ app: AppMetrics,
        status: Int,
        reason: String?,
        attempts: Int,
        endToEndNanoseconds: Int64,
        run: ResultBatch? = nil
    ) {
        if status == 200 && reason == nil {
            if let run { run.metrics.delivered(app.delivered) } else { app.delivered.increment() }
        } else {
            other(app, status: status, reason: reason ?? "", run: run)
        }
        if attempts > 1 {
            app.apnsRetries.increment(by: attempts - 1)
        }
        if let run {
            run.metrics.endToEnd(endToEndNanoseconds, in: app.endToEnd)
        } else {
            app.endToEnd.recordNanoseconds(endToEndNanoseconds)
        }
    }

    /// A final outcome other than a plain 2xx: in a run, counted there (its counter looked up only
    /// when the outcome differs from the run's last). Not inlined: the 2xx path, inlined into
    /// every caller, stays small.
    @inline(never)
    private func other(_ app: AppMetrics, status: Int, reason: String, run: ResultBatch?) {
        if status == 0, reason == Self.cancelledReason { app.cancelled.increment() }
        guard let run else {
            counter(app, status: status, reason: reason).increment()
            return
        }
        run.metrics.other(app: ObjectIdentifier(app), status: status, reason: reason) { counter(app, status: status, reason: reason) }
    }

    /// The counter of `app`'s notifications that ended with `status` and `reason`.
    private func counter(_ app: AppMetrics, status: Int, reason: String) -> Counter {
        let known = app.others.withLock { others in
            others.first { $0.status == status && $0.reason == reason }?.counter
        }
        if let known { return known }
        let key = NotificationKey(app: app.app, status: status, reason: reason)
        let counter = notifications.withLock { cache in
            if let counter = cache[key] { return counter }
            let counter = Counter(
                label: "pushline_notifications_total",
                dimensions: [("app", app.app), ("status", String(status)), ("reason", key.reason)]
            )
            cache[key] = counter
            return counter
        }
        // A reason APNs makes up could be anything: only the first few are kept for the scan.
        app.others.withLock { others in
            if others.count < 16 { others.append((status, reason, counter)) }
        }
        return counter
    }

    func invalidation(app: String, reason: String) {
        let key = app + "\u{0}" + reason
        let counter = invalidations.withLock { cache in
            if let counter = cache[key] { return counter }
            let counter = Counter(label: "pushline_invalidations_total", dimensions: [("app", app), ("reason", reason)])
            cache[key] = counter
            return counter
        }
        counter.increment()
    }

    func rejected(code: String) {
        let counter = rejects.withLock { cache in
            if let counter = cache[code] { return counter }
            let counter = Counter(label: "pushline_rejected_jobs_total", dimensions: [("code", code)])
            cache[code] = counter
            return counter
        }
        counter.increment()
        jobsRejected.increment()
    }

    private let gauges = Mutex<[String: Gauge]>([:])

    private func gauge(_ label: String, _ dimensions: [(String, String)]) -> Gauge {
        let key = label + dimensions.map { "|\($0.0)=\($0.1)" }.joined()
        return gauges.withLock { cache in
            if let gauge = cache[key] { return gauge }
            let gauge = Gauge(label: label, dimensions: dimensions)
            cache[key] = gauge
            return gauge
        }
    }

    /// Samples the pools: connections by state, stream limit and open streams per connection,
    /// queue depth. Called once a second.
    func observe(app: String, status: APNSClient.Status) {
        var byState: [String: Int] = ["connecting": 0, "active": 0, "draining": 0, "backing_off": 0]
        for (index, connection) in status.connections.enumerated() {
            let state: String
            switch connection.state {
            case .connecting: state = "connecting"
            case .active: state = "active"
            case .draining: state = "draining"
            case .backingOff: state = "backing_off"
            case .shutDown: state = "shut_down"
            }
            byState[state, default: 0] += 1
            gauge("pushline_apns_stream_limit", [("app", app), ("connection", String(index))]).record(connection.limit)
            gauge("pushline_apns_open_streams", [("app", app), ("connection", String(index))]).record(connection.reservedStreams)
        }
        for (state, count) in byState {
            gauge("pushline_apns_connections", [("app", app), ("state", state)]).record(count)
        }
        gauge("pushline_apns_queue_depth", [("app", app)]).record(status.queued)
    }

    func jobCompleted() {
        jobsCompleted.increment()
    }

    /// `count` jobs finished together (a group's members).
    func jobsCompleted(_ count: Int) {
        jobsCompleted.increment(by: count)
    }

    func produceRetried() {
        retries.increment()
    }
}
