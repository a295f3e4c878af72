import PushlineAPNSCore
import ServiceLifecycle

/// The publisher as a Service: its `run` owns the retry loop; on graceful shutdown (after the
/// consumer has committed and the APNs pools have closed) it stops retrying and closes the
/// producer, which flushes for up to 5 s.
extension ResultPublisher: Service {
    func run() async throws {
        await cancelWhenGracefulShutdown { await self.retryLoop() }
        let left = stop()
        if left > 0 {
            logger.warning(
                "result records not acknowledged at shutdown; their jobs stay uncommitted",
                metadata: [
                    "records": "\(left)"
                ]
            )
        }
        await producer.close(timeout: .seconds(5))
    }

    /// Produces again what is ready, then sleeps until the next delivery report (if a record waits
    /// for room), the next record to retry, or the end of the earliest backoff. Ends when cancelled.
    func retryLoop() async {
        while !Task.isCancelled {
            let seen = changed.generation
            let (ready, nextBackoffEnd) = takeReady(now: MonotonicInstant.now)
            if ready.isEmpty {
                await changed.wait(after: seen, until: nextBackoffEnd)
                continue
            }
            // Oldest first; once the queue is full again, the rest wait for room behind it.
            for (index, pending) in ready.enumerated() {
                if let seenWhenFull = attempt(pending) {
                    waitForRoom(ready[(index + 1)...], deliveriesSeen: seenWhenFull)
                    break
                }
            }
        }
    }
}
