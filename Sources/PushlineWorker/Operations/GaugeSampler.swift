import PushlineAPNS
import ServiceLifecycle

/// Samples the worker's gauges every `interval` (notifications in flight, the producer's queue,
/// each APNs pool's connections and hold), as a Service that stops on graceful shutdown.
///
/// After each sample it signals `sampled`: the pools' hold state has no event of its own, and the
/// shutdown drain looks at it again on each sample.
final class GaugeSampler: Service, Sendable {
    let sampled = ChangeSignal()
    private let interval: Duration
    private let metrics: WorkerMetrics
    private let gate: InflightGate
    private let publisher: ResultPublisher
    private let clients: [String: APNSClient]

    init(
        interval: Duration = .milliseconds(250), metrics: WorkerMetrics, gate: InflightGate, publisher: ResultPublisher,
        clients: [String: APNSClient]
    ) {
        self.interval = interval
        self.metrics = metrics
        self.gate = gate
        self.publisher = publisher
        self.clients = clients
    }

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while true {
                self.sample()
                do {
                    try await Task.sleep(for: self.interval)
                } catch {
                    return
                }
            }
        }
    }

    func sample() {
        metrics.inflight.record(gate.count)
        metrics.producerQueueDepth.record(publisher.queueDepth)
        for (name, client) in clients {
            metrics.observe(app: name, status: client.status())
        }
        sampled.signal()
    }
}
