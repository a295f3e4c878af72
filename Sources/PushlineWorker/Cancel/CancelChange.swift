/// One change to what is cancelled, read from the control topic (`kafka.control_topic`) by every
/// worker, in the topic's order: a cancel, or its lifting (a tombstone, `pushline cancel --undo`).
public enum CancelChange: Sendable, Hashable {
    /// `target` is cancelled from `writtenAtMilliseconds` (the control record's timestamp, unix
    /// milliseconds) until `expiresAtMilliseconds` (after which it is forgotten: the cancel's
    /// retention); `reason` is the sender's text, for the log.
    case cancel(target: CancelTarget, reason: String?, writtenAtMilliseconds: Int64, expiresAtMilliseconds: Int64)
    /// `target` is no longer cancelled (jobs that arrive from now on are sent).
    case lift(CancelTarget)
}
