import Logging
import Metrics
import PushlineKafka
import Synchronization

/// The worker's consumer-group membership as librdkafka's statistics show it (poll thread, every
/// `statistics.interval.ms`): the lag gauges, and the watchdog (`GroupWatchdog`) that tells a
/// stuck member from a quiet one. A stuck member logs a warning with what it knows (member id,
/// join state, last rebalance), sets `pushline_group_stuck` to 1 and makes `/readyz` not ready,
/// until it recovers (docs/operations.md, "A stuck consumer group").
final class GroupMonitor: Sendable {
    /// What the monitor asks the rest of the worker, once it is built.
    struct Inputs: Sendable {
        var owned: @Sendable () -> Int
        var membership: @Sendable () -> KafkaMembership
        var held: @Sendable () -> Bool
        var kafkaUnreachable: @Sendable () -> Bool
    }

    private let lag = ConsumerLagReporter()
    private let watchdog: Mutex<GroupWatchdog>
    private let inputs = Mutex<Inputs?>(nil)
    private let stuckReason = Mutex<String?>(nil)
    private let stuckGauge = Gauge(label: "pushline_group_stuck")
    private let logger: Logger

    init(bound: Duration, logger: Logger) {
        self.watchdog = Mutex(GroupWatchdog(bound: bound))
        self.logger = logger
        stuckGauge.record(0)
    }

    func attach(_ inputs: Inputs) {
        self.inputs.withLock { $0 = inputs }
    }

    /// Why `/readyz` is not ready on the group's account; nil when the group is not stuck.
    var notReadyReason: String? { stuckReason.withLock { $0 } }

    /// librdkafka's statistics JSON (poll thread).
    func update(_ json: String) {
        guard let statistics = GroupStatistics.parse(json) else { return }
        lag.update(statistics)
        guard let sources = inputs.withLock({ $0 }) else { return }
        let assigned = statistics.assigned
        let observation = GroupWatchdog.Observation(
            now: .now,
            joinState: statistics.joinState,
            owned: sources.owned(),
            lag: assigned.reduce(0) { $0 + $1.lag },
            committed: assigned.reduce(0) { $0 + ($1.committed ?? 0) },
            held: sources.held(),
            kafkaUnreachable: sources.kafkaUnreachable()
        )
        let change = watchdog.withLock { $0.observe(observation) }
        switch change {
        case .becameStuck(let stuck):
            let membership = sources.membership()
            let seconds = (ContinuousClock.now - stuck.since).components.seconds
            let reason = "consumer group stuck for \(seconds) s: this member \(stuck)"
            stuckReason.withLock { $0 = reason }
            stuckGauge.record(1)
            logger.warning(
                "\(reason); see docs/operations.md, \"A stuck consumer group\"",
                metadata: [
                    "member_id": "\(membership.memberID ?? "none")",
                    "join_state": "\(statistics.joinState)",
                    "owned_partitions": "\(observation.owned)",
                    "lag": "\(observation.lag)",
                    "last_rebalance": "\(membership.lastRebalance ?? "none")",
                    "since_last_rebalance_s": "\(membership.sinceLastRebalance.map { "\($0.components.seconds)" } ?? "-")",
                    "rebalances": "\(statistics.rebalanceCount)",
                    "rebalance_reason": "\(statistics.rebalanceReason)",
                ]
            )
        case .recovered:
            stuckReason.withLock { $0 = nil }
            stuckGauge.record(0)
            logger.notice("consumer group no longer stuck", metadata: ["owned_partitions": "\(observation.owned)"])
        case nil:
            break
        }
    }
}
