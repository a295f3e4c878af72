import PushlineAPNS
import ServiceLifecycle

/// Sizes the in-flight gate every `interval` from the measured send rate and the streams in use
/// (`AdaptiveWindow`), and publishes the window and the measured queue delay. A Service that stops
/// on graceful shutdown; with `worker.max_queue_ms` 0 the gate keeps `worker.max_inflight`.
final class WindowController: Service, Sendable {
    private let interval: Duration
    private let gate: InflightGate
    private let clients: [String: APNSClient]
    private let meter: QueueDelayMeter
    private let metrics: WorkerMetrics
    private let target: Duration?

    init(
        target: Duration?,
        gate: InflightGate,
        clients: [String: APNSClient],
        meter: QueueDelayMeter,
        metrics: WorkerMetrics,
        interval: Duration = .milliseconds(100)
    ) {
        self.target = target
        self.gate = gate
        self.clients = clients
        self.meter = meter
        self.metrics = metrics
        self.interval = interval
    }

    func run() async throws {
        let initial = Sampled(window: target.map { AdaptiveWindow(target: $0, maximum: gate.maximum) })
        await PeriodicSampling.run(every: interval, state: initial) { self.sample(&$0) }
    }

    /// What one sample leaves for the next: the window's rate history and the smoothed delay.
    private struct Sampled: Sendable {
        var window: AdaptiveWindow?
        var delay: Double?
    }

    private func sample(_ state: inout Sampled) {
        if var current = state.window {
            let streams = clients.values.reduce(0) { sum, client in
                sum + client.status().connections.reduce(0) { $0 + $1.reservedStreams }
            }
            let limit = current.sample(finished: gate.releasedTotal, streamsInUse: streams, now: .now)
            state.window = current
            gate.setLimit(limit)
            metrics.sendRate.record(Int(current.rate.rounded()))
        }
        metrics.window.record(gate.limit)
        if let average = meter.takeAverage() {
            // Smoothed over about a second of samples.
            let delay = state.delay.map { $0 * 0.9 + average * 0.1 } ?? average
            state.delay = delay
            metrics.queueDelay.record(delay)
        }
    }
}
