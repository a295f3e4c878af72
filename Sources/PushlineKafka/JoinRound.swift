/// A close's wait for the join round this member is part of (`ConsumerState.awaitingJoin`): when
/// it began, and until when it waits.
///
/// A class, so that `ConsumerState`'s payloads are references: the enum then has a fixed layout, and
/// matching `.running` for every record taken is a compare. With the instants (of a resilient
/// type) as the payload, each match copied the phase through its value witnesses. Made once per
/// close.
final class JoinRound: Sendable, Hashable {
    let began: ContinuousClock.Instant
    let until: ContinuousClock.Instant

    init(began: ContinuousClock.Instant, until: ContinuousClock.Instant) {
        self.began = began
        self.until = until
    }

    static func == (lhs: JoinRound, rhs: JoinRound) -> Bool {
        lhs.began == rhs.began && lhs.until == rhs.until
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(began)
        hasher.combine(until)
    }
}
