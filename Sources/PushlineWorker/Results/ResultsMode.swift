/// Which delivery records the worker publishes (`worker.results`).
public enum ResultsMode: String, Sendable, Hashable, CaseIterable {
    /// One delivery record per token (per broadcast), whatever its outcome.
    case full
    /// No delivery record for a 2xx outcome; every other final delivery record, every
    /// `token_invalidated` and `channel_gone`, and every `job_done` as in `full`.
    case compact
}
