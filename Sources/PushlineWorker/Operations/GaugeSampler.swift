import PushlineAPNS
import PushlineKafka
import ServiceLifecycle
import Synchronization

/// Samples the worker's gauges every `interval` (notifications in flight, the producer's queue,
/// each APNs pool's connections and hold), as a Service that stops on graceful shutdown. Gauges
/// are sampled because they change with every request; nothing waits on this loop.
final class GaugeSampler: Service, Sendable {
    private let interval: Duration
    private let metrics: WorkerMetrics
    private let gate: InflightGate
    private let publisher: ResultPublisher
    private let clients: [String: APNSClient]
    /// Notifications a crash now would make the group send again.
    private let uncommitted: @Sendable () -> Int
    /// Partitions this member owns now.
    private let assigned: @Sendable () -> Int
    /// What the consumer's memory of lost partitions did so far, and what was counted of it.
    private let lostWork: @Sendable () -> LostWorkCounts
    private let lostWorkCounted = Mutex(LostWorkCounts())
    /// With several apps: each app's part of the window, and its gauges.
    private let apps: (window: AppWindow, metrics: [String: AppWindowMetrics])?

    init(
        interval: Duration = .milliseconds(250),
        metrics: WorkerMetrics,
        gate: InflightGate,
        publisher: ResultPublisher,
        clients: [String: APNSClient],
        uncommitted: @escaping @Sendable () -> Int = { 0 },
        assigned: @escaping @Sendable () -> Int = { 0 },
        lostWork: @escaping @Sendable () -> LostWorkCounts = { LostWorkCounts() },
        apps: (window: AppWindow, metrics: [String: AppWindowMetrics])? = nil
    ) {
        self.apps = apps
        self.uncommitted = uncommitted
        self.assigned = assigned
        self.lostWork = lostWork
        self.interval = interval
        self.metrics = metrics
        self.gate = gate
        self.publisher = publisher
        self.clients = clients
    }

    func run() async throws {
        await PeriodicSampling.run(every: interval) { self.sample() }
    }

    func sample() {
        metrics.inflight.record(gate.count)
        metrics.uncommitted.record(uncommitted())
        metrics.assignedPartitions.record(assigned())
        let lost = lostWork()
        let counted = lostWorkCounted.withLock { counted in
            defer { counted = lost }
            return counted
        }
        if lost != counted {
            metrics.lostRecordsSkipped.increment(by: lost.skipped - counted.skipped)
            metrics.lostRecordsResumed.increment(by: lost.resumed - counted.resumed)
            metrics.lostPartitionsForgotten.increment(by: lost.forgotten - counted.forgotten)
        }
        metrics.producerQueueDepth.record(publisher.queueDepth)
        for (name, client) in clients {
            metrics.observe(app: name, status: client.status())
        }
        if let apps {
            for load in apps.window.all {
                apps.metrics[load.name]?.inflight.record(load.inflight.value)
                apps.metrics[load.name]?.parking.record(load.isParking ? 1 : 0)
            }
        }
    }
}
