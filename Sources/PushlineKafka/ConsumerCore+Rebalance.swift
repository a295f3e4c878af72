import CRdKafka
import Foundation

extension ConsumerCore: RDKafkaRebalanceHandler {
    /// librdkafka's rebalance callback, on the poll thread.
    func rebalance(
        _ handle: OpaquePointer,
        _ err: rd_kafka_resp_err_t,
        _ partitions: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>
    ) {
        // Messages fetched before this rebalance belong to the assignment they came from.
        flushPending()
        let list = RDKafkaTopicPartitionList.partitions(of: partitions)
        // librdkafka may not say (no group yet); then the configuration does: a cooperative
        // strategy, or the consumer protocol, whose rebalances are all incremental.
        let cooperative =
            RDKafkaRebalanceProtocol.isCooperative(handle)
            ?? (configuration.usesConsumerGroupProtocol
                || configuration.properties["partition.assignment.strategy"]?.contains("cooperative") == true)
        switch err {
        case RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS:
            client.callbacks.kafkaAnswered()
            joinPending = false
            setLastRebalance("assigned \(list.count)")
            condition.lock()
            assignments.assign(list)
            let owned = assignments.assigned.count
            condition.unlock()
            if cooperative {
                check(rd_kafka_incremental_assign(handle, partitions), "incremental assign")
            } else {
                check(rd_kafka_assign(handle, partitions), "assign")
            }
            bulkQueue.takeOver(list.filter { !isPriority($0.topic) })
            let paused = list.filter { isPriority($0.topic) ? priorityFetchPaused : fetchPaused }
            if !paused.isEmpty {
                _ = RDKafkaTopicPartitionList(paused).withPointer { rd_kafka_pause_partitions(handle, $0) }
            }
            // librdkafka keeps an application pause on a partition across unassign and assign
            // (an assign clears only its own pause): a partition paused under an earlier
            // assignment, and not resumed while unassigned, would never fetch again (issue 27).
            let running = list.filter { isPriority($0.topic) ? !priorityFetchPaused : !fetchPaused }
            if !running.isEmpty {
                _ = RDKafkaTopicPartitionList(running).withPointer { rd_kafka_resume_partitions(handle, $0) }
            }
            if list.isEmpty {
                // Cooperative rounds hand out nothing new on the way to a final assignment.
                logger.debug("rebalance round: no partitions added", metadata: ["owned": "\(owned)"])
            } else {
                logger.info(
                    "rebalance: assigned \(list.count) partitions, now own \(owned)",
                    metadata: ["partitions": "\(list)", "protocol": "\(cooperative ? "cooperative" : "eager")"]
                )
            }
            continuation.yield(.assigned(list))
        case RD_KAFKA_RESP_ERR__REVOKE_PARTITIONS:
            let lost = rd_kafka_assignment_lost(handle) != 0
            revoke(list, handle: handle, partitions: partitions, cooperative: cooperative)
            // librdkafka rejoins after a revoke (not when closing: that revoke is the last).
            if !closing { joinPending = true }
            setLastRebalance("\(lost ? "lost" : "revoked") \(list.count)")
        default:
            logger.error("rebalance error: \(KafkaError(err)); dropping the assignment")
            condition.lock()
            let all = assignments.assigned
            _ = assignments.finishRevoke(all)
            condition.unlock()
            forgetUncommitted(all)
            if !closing { joinPending = true }
            if cooperative {
                // The cooperative protocols (cooperative-sticky, and group.protocol=consumer)
                // refuse rd_kafka_assign: what this member owns is given up incrementally.
                if !all.isEmpty {
                    RDKafkaTopicPartitionList(all).withPointer { list in
                        check(rd_kafka_incremental_unassign(handle, list), "incremental unassign")
                    }
                }
            } else {
                check(rd_kafka_assign(handle, nil), "unassign")
            }
            continuation.yield(.revoked(all))
        }
    }

    /// Stop handing out, drain in-flight records up to the bound, store and commit what
    /// completed, then release. On a lost assignment nothing is stored or committed.
    private func revoke(
        _ list: [TopicPartition],
        handle: OpaquePointer,
        partitions: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>,
        cooperative: Bool
    ) {
        let lost = rd_kafka_assignment_lost(handle) != 0
        let began = ContinuousClock.now
        let deadline = closing ? closeDrainDeadline : began + configuration.revokeDrainTimeout
        condition.lock()
        assignments.beginRevoke(list)
        var inFlight = assignments.started(list)
        let startedAtRevoke = inFlight
        let generations = assignments.generations(list)
        condition.unlock()
        if !lost, !list.isEmpty {
            logger.info(
                "rebalance: revoking \(list.count) partitions; finishing their \(startedAtRevoke) started records first",
                metadata: ["partitions": "\(list)"]
            )
        }
        if startedAtRevoke > 0 {
            // Outside the lock: the owner's answer may abandon records at once.
            notify(list, generations: generations, stage: lost ? .givingUp : .began)
        }
        condition.lock()
        if !lost {
            drainWaiting = true
            inFlight = assignments.started(list)
            while inFlight > 0 && ContinuousClock.now < deadline {
                _ = condition.wait(until: Date(timeIntervalSinceNow: (deadline - .now).seconds))
                inFlight = assignments.started(list)
            }
            drainWaiting = false
            if inFlight > 0 {
                condition.unlock()
                notify(list, generations: generations, stage: .givingUp)
                condition.lock()
            }
        }
        let completed = assignments.finishRevoke(list)
        condition.unlock()
        if lost {
            logger.warning("partitions lost (\(list)); not committing \(inFlight) in-flight records' offsets")
        } else {
            if inFlight > 0 {
                logger.warning(
                    "revoke drain timed out with \(inFlight) records in flight; the next owner re-delivers them",
                    metadata: ["partitions": "\(list)"]
                )
            }
            store(completed)
            if !completed.isEmpty { commit(completed) }
        }
        forgetUncommitted(list)
        if cooperative {
            check(rd_kafka_incremental_unassign(handle, partitions), "incremental unassign")
        } else {
            check(rd_kafka_assign(handle, nil), "unassign")
        }
        if !list.isEmpty {
            let drained = ContinuousClock.now - began
            logger.info(
                "rebalance: revoked \(list.count) partitions after \(drained.milliseconds) ms",
                metadata: [
                    "partitions": "\(list)", "unfinished": "\(inFlight)", "committed": "\(lost ? "no (assignment lost)" : "yes")",
                ]
            )
        }
        continuation.yield(.revoked(list))
    }

    private func setLastRebalance(_ event: String) {
        condition.lock()
        lastRebalance = (event, .now)
        condition.unlock()
    }

    private func notify(_ list: [TopicPartition], generations: [UInt64], stage: RevokeNotice.Stage) {
        onRevoke?(RevokeNotice(partitions: list, generations: generations, stage: stage))
    }

    private func check(_ error: OpaquePointer?, _ what: String) {
        guard let error else { return }
        logger.error("\(what) failed: \(KafkaError(taking: error))")
    }

    private func check(_ err: rd_kafka_resp_err_t, _ what: String) {
        guard err != RD_KAFKA_RESP_ERR_NO_ERROR else { return }
        logger.error("\(what) failed: \(KafkaError(err))")
    }
}
