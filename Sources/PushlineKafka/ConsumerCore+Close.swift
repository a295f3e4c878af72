import Foundation

extension ConsumerCore {
    /// Clean shutdown, as the machine's `closeStep`s say: stop handing out records, let a pending
    /// join round complete, wait for started records until the deadline while still polling,
    /// store and commit, then leave the group. Poll thread.
    func runClose() {
        condition.lock()
        consumerQueue = nil
        condition.unlock()
        continuation.finish()
        priorityContinuation.finish()
        let pollMilliseconds = Int32(clamping: configuration.pollInterval.milliseconds)
        var joinWaitBegan: ContinuousClock.Instant?
        closing: while true {
            let lost = client.assignmentLost
            switch withMachine({ $0.closeStep(now: .now, assignmentLost: lost) }) {
            case .awaitJoin(let starting, let bound):
                if starting {
                    joinWaitBegan = .now
                    logger.info(
                        "closing: waiting for the group's rebalance to assign this member before leaving",
                        metadata: ["bound_ms": "\(bound.milliseconds)"]
                    )
                }
                pollBatch(timeout: pollMilliseconds)
                // Bulk records fetched under the new assignment are the next owner's.
                bulkQueue.discard(upTo: configuration.maxBatchSize)
            case .drain(let actions, let waitUntil, let joinWait):
                if let joinWait, joinWaitBegan != nil {
                    if joinWait.completed {
                        logger.info("closing: the rebalance completed after \(joinWait.waited.milliseconds) ms; leaving the group")
                    } else {
                        logger.warning(
                            "closing: the group's rebalance did not complete within \(joinWait.waited.milliseconds) ms; leaving anyway"
                        )
                    }
                }
                perform(actions)
                if let waitUntil {
                    condition.lock()
                    if machine.unfinished() > 0 {
                        drainWaiting = true
                        _ = condition.wait(until: Date(timeIntervalSinceNow: (waitUntil - .now).seconds))
                        drainWaiting = false
                    }
                    condition.unlock()
                }
                pollBatch(timeout: 0)  // serve logs and rebalances; records are dropped while closing
            case .leave(let actions, let unfinished):
                if unfinished > 0 {
                    logger.warning("consumer closing with \(unfinished) started records unfinished; they will be redelivered")
                }
                perform(actions)
                break closing
            }
        }
        // Serves the final revoke through the rebalance handler, then leaves the group.
        if let error = client.closeConsumer() {
            logger.warning("consumer close: \(error)")
        }
        condition.lock()
        machine.closed()
        let waiters = closeWaiters
        closeWaiters = []
        condition.unlock()
        for waiter in waiters { waiter.resume() }
        logger.info("consumer closed")
    }
}
