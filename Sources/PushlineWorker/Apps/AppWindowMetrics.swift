import Metrics

/// One app's window metrics, in a worker with several apps: its notifications in flight, whether
/// it parks, the jobs it parked and brought back, and the parked jobs this worker holds for it.
final class AppWindowMetrics: Sendable {
    /// `pushline_app_inflight{app}`: the app's notifications in flight (sampled).
    let inflight: Gauge
    /// `pushline_app_parking{app}`: 1 while the app's new jobs go to the deferred topic.
    let parking: Gauge
    /// `pushline_app_parked_jobs{app}`: parked jobs this worker read back from the deferred topic
    /// and holds until the app can send (sampled).
    let parkedJobs: Gauge
    /// `pushline_app_parked_total{app}`: jobs this worker copied to the deferred topic.
    let parked: Counter
    /// `pushline_app_unparked_total{app}`: parked jobs this worker brought back to send.
    let unparked: Counter

    init(app: String) {
        let dimensions = [("app", app)]
        inflight = Gauge(label: "pushline_app_inflight", dimensions: dimensions)
        parking = Gauge(label: "pushline_app_parking", dimensions: dimensions)
        parkedJobs = Gauge(label: "pushline_app_parked_jobs", dimensions: dimensions)
        parked = Counter(label: "pushline_app_parked_total", dimensions: dimensions)
        unparked = Counter(label: "pushline_app_unparked_total", dimensions: dimensions)
    }
}
