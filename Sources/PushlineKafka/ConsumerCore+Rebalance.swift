import Foundation

extension ConsumerCore: RDKafkaRebalanceHandler {
    /// librdkafka's rebalance callback, on the poll thread.
    func rebalance(_ rebalance: RDKafkaRebalance) {
        // Messages fetched before this rebalance belong to the assignment they came from.
        flushPending()
        let list = rebalance.partitions
        let cooperative = withMachine { $0.isCooperative(reported: rebalance.cooperative) }
        switch rebalance.kind {
        case .assign:
            let (actions, owned, lost) = withMachine { machine in
                (
                    machine.assigned(list, cooperative: cooperative, now: .now), machine.assignments.assignedCount,
                    machine.assignments.lostKept.partitions
                )
            }
            if lost > 0, !list.isEmpty {
                logger.info(
                    "rebalance: work finished on \(lost) lost partitions is kept; a partition back unchanged skips it",
                    metadata: ["partitions": "\(list)"]
                )
            }
            perform(actions)
            if list.isEmpty {
                // Cooperative rounds hand out nothing new on the way to a final assignment.
                logger.debug("rebalance round: no partitions added", metadata: ["owned": "\(owned)"])
            } else {
                logger.info(
                    "rebalance: assigned \(list.count) partitions, now own \(owned)",
                    metadata: ["partitions": "\(list)", "protocol": "\(cooperative ? "cooperative" : "eager")"]
                )
            }
        case .revoke(let lost):
            revoke(list, lost: lost, cooperative: cooperative)
        case .failed(let error):
            logger.error("rebalance error: \(error); dropping the assignment")
            perform(withMachine { $0.rebalanceFailed(cooperative: cooperative, now: .now) })
        }
    }

    /// Stop handing out, wait for started records up to the bound, store and commit what
    /// completed, then release. On a lost assignment nothing is stored or committed.
    private func revoke(_ list: [TopicPartition], lost: Bool, cooperative: Bool) {
        let began = ContinuousClock.now
        let (drain, actions) = withMachine { $0.beginRevoke(list, lost: lost, now: began) }
        if !lost, !list.isEmpty {
            logger.info(
                "rebalance: revoking \(list.count) partitions; finishing their \(drain.started) started records first",
                metadata: ["partitions": "\(list)"]
            )
        }
        // Outside the lock: the owner's answer may abandon records at once.
        perform(actions)
        condition.lock()
        var unfinished = machine.unfinished(list)
        if !lost {
            drainWaiting = true
            while unfinished > 0 && ContinuousClock.now < drain.deadline {
                _ = condition.wait(until: Date(timeIntervalSinceNow: (drain.deadline - .now).seconds))
                unfinished = machine.unfinished(list)
            }
            drainWaiting = false
        }
        let finish = machine.finishRevoke(list, lost: lost, cooperative: cooperative, drain: drain, unfinished: unfinished, now: .now)
        // Read under the lock: other threads complete records meanwhile.
        let kept = machine.assignments.lostKept
        condition.unlock()
        if lost {
            logger.warning(
                "partitions lost (\(list)); not committing \(unfinished) in-flight records' offsets",
                metadata: [
                    "kept": "what was finished, for the partitions' return to this member",
                    "kept_partitions": "\(kept.partitions)", "kept_records": "\(kept.records)",
                ]
            )
        } else if unfinished > 0 {
            logger.warning(
                "revoke drain timed out with \(unfinished) records in flight; the next owner re-delivers them",
                metadata: ["partitions": "\(list)"]
            )
        }
        // A refused commit (librdkafka's mock cluster refuses every commit while a classic group
        // is joining; Kafka accepts them until the round's JoinGroup answers) means the next owner
        // redoes what completed since the last commit: the line says so.
        let failedCommit = perform(finish)
        if !list.isEmpty {
            let committed = lost ? "no (assignment lost)" : failedCommit.map { "no (\($0.code))" } ?? "yes"
            logger.info(
                "rebalance: revoked \(list.count) partitions after \((ContinuousClock.now - began).milliseconds) ms",
                metadata: ["partitions": "\(list)", "unfinished": "\(unfinished)", "committed": "\(committed)"]
            )
        }
    }
}
