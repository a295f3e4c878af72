/// Wraps each run of final outcomes that an `APNSClient` hands out at once (the answers of one
/// read batch, the expiries of one tick): a listener can then act on the run as a whole. The
/// worker produces a run's result records in one call to librdkafka when the run ends.
///
/// Class-bound: the client calls it for every event that ends streams, and an opaque existential
/// was copied (through its value witnesses) and destroyed around each call; a class reference is
/// only retained.
public protocol APNSOutcomeScope: AnyObject, Sendable {
    /// Calls `body`, which tells the run's observers their outcomes, on the calling thread.
    func withOutcomeRun(_ body: () -> Void)
}
