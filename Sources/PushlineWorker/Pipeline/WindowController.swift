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
        await cancelWhenGracefulShutdown { await self.loop() }
    }

    private func loop() async {
        var window = target.map { AdaptiveWindow(target: $0, maximum: gate.maximum) }
        var delay: Double?
        do {
            while !Task.isCancelled {
                if var current = window {
                    let streams = self.clients.values.reduce(0) { sum, client in
                        sum + client.status().connections.reduce(0) { $0 + $1.reservedStreams }
                    }
                    let limit = current.sample(finished: self.gate.releasedTotal, streamsInUse: streams, now: .now)
                    window = current
                    self.gate.setLimit(limit)
                    self.metrics.sendRate.record(Int(current.rate.rounded()))
                }
                self.metrics.window.record(self.gate.limit)
                if let average = self.meter.takeAverage() {
                    // Smoothed over about a second of samples.
                    delay = delay.map { $0 * 0.9 + average * 0.1 } ?? average
                    self.metrics.queueDelay.record(delay!)
                }
                try await Task.sleep(for: self.interval)
            }
        } catch {
            // Cancelled: graceful shutdown.
        }
    }
}
