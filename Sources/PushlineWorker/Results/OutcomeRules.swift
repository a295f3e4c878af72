/// What decides which records an outcome produces, fixed for the worker's life: the results
/// mode and the 410 reasons that invalidate a token.
struct OutcomeRules: Sendable, Hashable {
    var mode: ResultsMode
    /// `worker.invalidate_on`, with `ExpiredToken` added when `Unregistered` is there (the same
    /// 410 case).
    var invalidateOn: Set<String>

    init(mode: ResultsMode = .full, invalidateOn: [String] = ["Unregistered"]) {
        self.mode = mode
        var reasons = Set(invalidateOn)
        if reasons.contains("Unregistered") { reasons.insert("ExpiredToken") }
        self.invalidateOn = reasons
    }
}
