/// Wraps each run of final outcomes that an `APNSClient` hands out at once (the answers of one
/// read batch, the expiries of one tick): a listener can then act on the run as a whole. The
/// worker produces a run's result records in one call to librdkafka when the run ends.
public protocol APNSOutcomeScope: Sendable {
    /// Calls `body`, which tells the run's observers their outcomes, on the calling thread.
    func withOutcomeRun(_ body: () -> Void)
}
