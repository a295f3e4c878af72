import Synchronization

/// The average time notifications waited in the worker before their first send, over the last
/// period: the pipeline adds one sample per notification (two relaxed atomics), the window
/// controller takes the average and starts a new period.
final class QueueDelayMeter: Sendable {
    private let totalNanoseconds = Atomic<Int>(0)
    private let count = Atomic<Int>(0)

    func add(nanoseconds: Int64) {
        totalNanoseconds.wrappingAdd(Int(max(0, nanoseconds)), ordering: .relaxed)
        count.wrappingAdd(1, ordering: .relaxed)
    }

    /// Samples added up elsewhere (`OutcomeMetricsTally`), each already at least 0.
    func add(totalNanoseconds total: Int64, count added: Int) {
        totalNanoseconds.wrappingAdd(Int(total), ordering: .relaxed)
        count.wrappingAdd(added, ordering: .relaxed)
    }

    /// The average since the last call, in seconds; nil when nothing was measured.
    func takeAverage() -> Double? {
        let n = count.exchange(0, ordering: .relaxed)
        let total = totalNanoseconds.exchange(0, ordering: .relaxed)
        guard n > 0 else { return nil }
        return Double(total) / Double(n) / 1e9
    }
}
