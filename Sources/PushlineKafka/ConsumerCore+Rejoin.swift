import Logging

extension ConsumerCore {
    /// Abandons this member's join when `stalledJoin` says it is not going to be answered: cuts
    /// the connections, so that librdkafka fails the outstanding JoinGroup and sends a new one
    /// (an unsubscribe and subscribe would wait for the pending round: librdkafka postpones them
    /// while a JoinGroup is outstanding). Nothing is lost: the member owns no partition and has
    /// no started record. Poll thread, never while closing (`run` stops calling it).
    func rejoinIfStalled(now: ContinuousClock.Instant, owned: Int, started: Int) {
        let observation = StalledJoin.Observation(
            now: now,
            joinPending: joinPending,
            owned: owned,
            started: started,
            closing: closing || failed,
            kafkaUnreachable: joinPending && client.callbacks.failingRecently(within: .seconds(15))
        )
        guard case .rejoin(let pendingFor) = stalledJoin.observe(observation) else { return }
        logger.warning(
            "rejoining: join pending for \(pendingFor.milliseconds) ms with no assignment",
            metadata: [
                "bound_ms": "\(stalledJoin.bound.milliseconds)", "rejoins": "\(stalledJoin.rejoins)",
                "member_id": "\(membership.memberID ?? "none")",
            ]
        )
        let cut = client.dropConnections()
        logger.info("rejoining: cut \(cut) broker connections; librdkafka joins again on reconnect")
    }
}
