import Logging

extension ConsumerCore {
    /// Performs the machine's actions in order (poll thread; `condition` not held: the owner's
    /// answer to a revoke notice may call back into the consumer).
    /// Returns why a commit the actions waited for failed (nil: none failed, or none was waited for).
    @discardableResult
    func perform(_ actions: [ConsumerAction]) -> KafkaError? {
        var failedCommit: KafkaError?
        for action in actions {
            if case .commit(let offsets, wait: true) = action {
                failedCommit = commitAndWait(offsets) ?? failedCommit
            } else {
                perform(action)
            }
        }
        return failedCommit
    }

    /// Commits `offsets` and waits for the broker: why the commit failed, if it did.
    private func commitAndWait(_ offsets: [(TopicPartition, Int64)]) -> KafkaError? {
        switch client.commitAndWait(offsets) {
        case .success(let confirmed):
            committed(confirmed)
            return nil
        case .failure(let error):
            commitFailed(error)
            return error
        }
    }

    private func perform(_ action: ConsumerAction) {
        switch action {
        case .setFetchPaused(let paused, let partitions, let lane):
            guard !partitions.isEmpty else { return }
            if let error = client.setFetchPaused(paused, partitions) {
                logger.warning("cannot \(paused ? "pause" : "resume") partitions: \(error)")
            }
            // Lane changes are news; the per-assignment settings are not.
            if let lane {
                logger.debug(
                    "fetching \(paused ? "paused" : "resumed")",
                    metadata: ["partitions": "\(partitions.count)", "lane": "\(lane)"]
                )
            }
        case .storeOffsets(let offsets):
            for (topicPartition, error) in client.storeOffsets(offsets) {
                logger.warning("cannot store offset of \(topicPartition): \(error)")
            }
        case .commit(let offsets, wait: false):
            if let error = client.commitInBackground(offsets) { commitFailed(error) }
        case .commit(let offsets, wait: true):
            _ = commitAndWait(offsets)
        case .rejoin(let pendingFor, let rejoins):
            rejoin(pendingFor: pendingFor, rejoins: rejoins)
        case .assign(let partitions, let incremental):
            if let error = client.assign(partitions, incremental: incremental) {
                logger.error("\(incremental ? "incremental assign" : "assign") failed: \(error)")
            }
        case .routeToBulkQueue(let partitions):
            bulkQueue.takeOver(partitions)
        case .unassign(let partitions, let incremental):
            if let error = client.unassign(partitions, incremental: incremental) {
                logger.error("\(incremental ? "incremental unassign" : "unassign") failed: \(error)")
            }
        case .notifyRevoke(let notice):
            onRevoke?(notice)
        case .announceAssigned(let partitions):
            continuation.yield(.assigned(partitions))
        case .announceRevoked(let partitions):
            continuation.yield(.revoked(partitions))
        }
    }

    /// Abandons this member's join when the machine says it is not going to be answered
    /// (`StalledJoin`): cuts the connections, so that librdkafka fails the outstanding JoinGroup
    /// and sends a new one (an unsubscribe and subscribe would wait for the pending round:
    /// librdkafka postpones them while a JoinGroup is outstanding). Nothing is lost: the member
    /// owns no partition and has no started record.
    private func rejoin(pendingFor: Duration, rejoins: Int) {
        logger.warning(
            "rejoining: join pending for \(pendingFor.milliseconds) ms with no assignment",
            metadata: [
                "bound_ms": "\(configuration.stalledJoinLimit.milliseconds)", "rejoins": "\(rejoins)",
                "member_id": "\(client.memberID ?? "none")",
            ]
        )
        let cut = client.dropConnections()
        logger.info("rejoining: cut \(cut) broker connections; librdkafka joins again on reconnect")
    }

    /// A commit that failed: while Kafka (or the coordinator) does not answer, part of the outage's
    /// one warning (`RDKafkaCallbacks.kafkaFailed`); otherwise a warning, except that the same
    /// error again within `commitFailures.window` is counted, and the count told with the next
    /// warning or success (`CommitFailureFolding`). What failed stays stored and goes with the
    /// next commit.
    func commitFailed(_ error: KafkaError) {
        if RDKafkaCallbacks.unreachableCodes.contains(error.code) {
            client.callbacks.kafkaFailed("commit failed: \(error)")
            return
        }
        switch commitFailures.failed(error.code, now: .now) {
        case .fold:
            break
        case .warn(let folded):
            if let folded { warnFolded(folded) }
            logger.warning("commit failed: \(error)")
        }
    }

    func warnFolded(_ folded: CommitFailureFolding.Folded) {
        logger.warning(
            "commit failed \(folded.count) more times with \(folded.code) (folded into the warning before)",
            metadata: ["window_ms": "\(commitFailures.window.milliseconds)"]
        )
    }
}

extension ConsumerCore: RDKafkaCommitHandler {
    /// A background commit's result, on the poll thread (inside a poll).
    func committed(_ offsets: [(TopicPartition, Int64)]) {
        if let folded = commitFailures.succeeded() { warnFolded(folded) }
        withMachine { $0.committed(offsets) }
    }
}
