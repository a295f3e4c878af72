/// A close of the consumer that was asked for (`ConsumerState`): until when records already
/// started get to finish, and whether librdkafka raised a fatal error (then nothing is committed
/// any more).
///
/// A class, so that `ConsumerState`'s payloads are references and flags: the enum then has a
/// fixed layout, and matching `.running` for every record taken is a compare (an instant, of a
/// resilient type, as a payload made each match copy the state through its value witnesses).
/// Immutable: a fatal error after the request replaces it (`failing`).
final class CloseRequest: Sendable, Hashable {
    let deadline: ContinuousClock.Instant
    let failed: Bool

    init(deadline: ContinuousClock.Instant, failed: Bool) {
        self.deadline = deadline
        self.failed = failed
    }

    /// The same request after a fatal error: the first deadline holds.
    var failing: CloseRequest {
        failed ? self : CloseRequest(deadline: deadline, failed: true)
    }

    static func == (lhs: CloseRequest, rhs: CloseRequest) -> Bool {
        lhs.deadline == rhs.deadline && lhs.failed == rhs.failed
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(deadline)
        hasher.combine(failed)
    }
}
