/// Which failed commits get a warning of their own, as a pure value (the poll thread's).
///
/// The poll thread sends a background commit every `commitInterval` whatever became of the one
/// before, so while the group coordinator does not answer, commits pile up in librdkafka. Under
/// `group.protocol=consumer` they are all answered at the reconnect, with one error each: a
/// member fenced during the outage got 99 `UNKNOWN_MEMBER_ID` failures within 2 ms after a 20 s
/// cut (librdkafka's mock cluster; the classic protocol fails them at once as unreachable, which
/// the outage's single warning covers). So the first failure of a code is a warning, and the same
/// code again within `window` of that warning is counted instead; the count goes with the next
/// warning, or with the next commit that succeeds.
struct CommitFailureFolding: Sendable {
    /// Failures counted and not told yet.
    struct Folded: Sendable, Hashable {
        var code: KafkaError.Code
        var count: Int
    }

    enum Verdict: Sendable, Hashable {
        /// Warn of this failure; `folded`: the failures counted since the last warning.
        case warn(folded: Folded?)
        /// Counted: a warning of the same code was given less than `window` ago.
        case fold
    }

    let window: Duration
    private var lastWarning: (code: KafkaError.Code, at: ContinuousClock.Instant)?
    private var folded = 0

    init(window: Duration) {
        self.window = window
    }

    mutating func failed(_ code: KafkaError.Code, now: ContinuousClock.Instant) -> Verdict {
        if let lastWarning, lastWarning.code == code, now - lastWarning.at < window {
            folded += 1
            return .fold
        }
        let told = takeFolded()
        lastWarning = (code, now)
        return .warn(folded: told)
    }

    /// A commit succeeded: the failures counted since the last warning, if any (the next failure
    /// is warned of whatever its code).
    mutating func succeeded() -> Folded? {
        let told = takeFolded()
        lastWarning = nil
        return told
    }

    private mutating func takeFolded() -> Folded? {
        defer { folded = 0 }
        guard let lastWarning, folded > 0 else { return nil }
        return Folded(code: lastWarning.code, count: folded)
    }
}
