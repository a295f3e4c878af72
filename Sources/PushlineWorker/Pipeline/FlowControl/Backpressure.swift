/// The intake's rule at `worker.max_inflight`: wait, for room for a `quantum` of notifications
/// (`InflightGate.quantum`: the runs it admits are that long, not one job each). A short wait
/// (`patience`) is enough when APNs is merely busy; if it lasts, pause fetching (the poll thread keeps the member in the group)
/// until the in-flight count is down to the gate's low-water mark, then resume.
///
/// Pausing drops librdkafka's prefetched records (they are fetched again on resume), so it is not
/// done lightly. `pause` and `resume` are the consumer's, passed in so the rule is tested alone.
struct Backpressure: Sendable {
    let gate: InflightGate
    let patience: Duration
    let pause: @Sendable () -> Void
    let resume: @Sendable () -> Void

    init(
        gate: InflightGate,
        patience: Duration = .milliseconds(500),
        pause: @escaping @Sendable () -> Void,
        resume: @escaping @Sendable () -> Void
    ) {
        self.gate = gate
        self.patience = patience
        self.pause = pause
        self.resume = resume
    }

    /// Returns true when the next job may start, false when the task was cancelled (shutdown)
    /// while it waited.
    func admit() async -> Bool {
        guard gate.isFull else { return true }
        if await roomWithinPatience() { return true }
        if Task.isCancelled { return false }
        pause()
        defer { resume() }
        return await gate.waitForLowWater()
    }

    /// Whether the gate has room before `patience` runs out.
    private func roomWithinPatience() async -> Bool {
        await gate.waitForRoom(within: patience)
    }
}
