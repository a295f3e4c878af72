import CJemalloc
import Metrics
import PushlineWorker
import ServiceLifecycle

/// Samples jemalloc's own account of the heap every `interval` into two gauges:
/// `pushline_heap_allocated_bytes` (what the program holds) and `pushline_heap_resident_bytes`
/// (the allocator's pages in RAM: allocated plus its caches and fragmentation). With the process's
/// RSS they say where the memory is. A third, `pushline_heap_allocations`, counts the allocation
/// requests made so far (small and large, every arena): the benchmark divides its growth by the
/// notifications sent meanwhile. Nothing is recorded when jemalloc is not the allocator.
final class HeapSampler: Service, Sendable {
    private let interval: Duration
    private let allocated = Gauge(label: "pushline_heap_allocated_bytes")
    private let resident = Gauge(label: "pushline_heap_resident_bytes")
    private let allocations = Gauge(label: "pushline_heap_allocations")

    init(interval: Duration = .milliseconds(250)) {
        self.interval = interval
    }

    /// Samples until the group shuts down. Without jemalloc (or when `mallctl` cannot read its
    /// statistics) there is nothing to sample: the service then waits for the shutdown instead of
    /// returning, and RunCommand registers it with `successTerminationBehavior: .ignore`, so an
    /// early end of this optional sampler never ends the worker.
    func run() async throws {
        guard Allocator.description != nil, Self.readable() else {
            try? await gracefulShutdown()
            return
        }
        await PeriodicSampling.run(every: interval) { self.sample() }
    }

    /// Whether jemalloc answers the statistics this sampler reads.
    private static func readable() -> Bool {
        var epoch: UInt64 = 1
        return mallctl("epoch", nil, nil, &epoch, MemoryLayout<UInt64>.size) == 0 && statistic("stats.allocated") != nil
    }

    private func sample() {
        // jemalloc's statistics are a snapshot refreshed by writing "epoch".
        var epoch: UInt64 = 1
        guard mallctl("epoch", nil, nil, &epoch, MemoryLayout<UInt64>.size) == 0 else { return }
        if let value = Self.statistic("stats.allocated") { allocated.record(value) }
        if let value = Self.statistic("stats.resident") { resident.record(value) }
        // MALLCTL_ARENAS_ALL (4096): the sum over every arena.
        if let small = Self.counter("stats.arenas.4096.small.nrequests"),
            let large = Self.counter("stats.arenas.4096.large.nrequests")
        {
            allocations.record(Double(small &+ large))
        }
    }

    private static func counter(_ name: String) -> UInt64? {
        var value: UInt64 = 0
        var size = MemoryLayout<UInt64>.size
        return mallctl(name, &value, &size, nil, 0) == 0 ? value : nil
    }

    private static func statistic(_ name: String) -> Int? {
        var value = 0
        var size = MemoryLayout<Int>.size
        return mallctl(name, &value, &size, nil, 0) == 0 ? value : nil
    }
}
