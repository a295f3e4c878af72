import PushlineAPNS
import PushlineKafka

/// Runs of records produced together (`ResultBatch`): the records a thread publishes between the
/// start and the end of a run go to librdkafka in one call per topic when the run ends.
extension ResultPublisher: APNSOutcomeScope {
    /// A run's records are produced early once this many wait: a long run (a deadline sweep's)
    /// stays bounded, and at about 350 bytes a record a thread's buffer stays under
    /// `batchBytesKept`, so it is kept from run to run rather than made again.
    static let batchLimit = 512
    /// A batch's buffer larger than this after a run is given back (a burst does not keep it).
    static let batchBytesKept = 256 << 10

    /// The open batch of the calling thread, if a run is open on it.
    var openBatch: ResultBatch? { batches.openBatch }

    /// Runs `body` as one run: the records it publishes with a progress as their delivery
    /// (`publish(to:key:token:estimate:write:)`) are produced when it returns, in one call per
    /// topic. Runs nest: the outermost produces.
    func withBatch(_ body: (ResultBatch) -> Void) {
        let batch = batches.batch
        guard !batch.isOpen else {
            body(batch)
            return
        }
        batch.open()
        body(batch)
        endRun(batch)
        batch.metrics.flush()
        batch.isOpen = false
        if batch.bytes.capacity > Self.batchBytesKept { batch.bytes = JSONWriter(capacity: ResultBatch.initialCapacity) }
    }

    /// The APNs clients' runs of outcomes (`APNSOutcomeScope`): one batch each.
    func withOutcomeRun(_ body: () -> Void) {
        withBatch { _ in body() }
    }

    /// A record was added to `batch`: past `batchLimit`, the run's records so far are produced.
    func appended(to batch: ResultBatch) {
        if batch.count >= Self.batchLimit { produce(batch) }
    }

    /// Ends a run: produces what `batch` holds; then each token waiting for its records
    /// (`afterProduce`) says what follows them (`tokensProduced(_:)`, a value), which is added and
    /// produced in turn. What follows adds no token, so this ends after a second round at most.
    private func endRun(_ batch: ResultBatch) {
        repeat {
            produce(batch)
        } while batch.takeProduced({ delivery, count in
            if let following = delivery.tokensProduced(count) { publish(following, delivery: delivery) }
        })
    }

    /// Produces what `batch` holds, in one call per run of records on one topic. Calls nothing
    /// back: the tokens waiting for these records are asked at the end of the run (`endRun`).
    func produce(_ batch: ResultBatch) {
        guard !batch.isEmpty else { return }
        let seen = deliveries.load(ordering: .sequentiallyConsistent)
        var refused: [(Pending, KafkaError)] = []
        batch.drainEntries { entries, bytes in
            var start = 0
            while start < entries.count {
                // A run of records on one topic: one call.
                let topic = entries[start].topic
                var end = start + 1
                while end < entries.count, entries[end].topic == topic { end += 1 }
                let run = UnsafeBufferPointer(rebasing: entries[start..<end])
                let refusals = producer.produce(batchTo: topic, count: run.count) { index in
                    let entry = run[index]
                    return KafkaBatchRecord(
                        key: entry.keyCount < 0
                            ? nil : UnsafeRawBufferPointer(rebasing: bytes[entry.keyStart..<entry.keyStart + entry.keyCount]),
                        value: UnsafeRawBufferPointer(rebasing: bytes[entry.valueStart..<entry.valueStart + entry.valueCount]),
                        delivery: entry.delivery
                    )
                }
                for refusal in refusals {
                    // Refused: kept as arrays of its own until it is produced again.
                    let entry = run[refusal.index]
                    let key = entry.keyCount < 0 ? nil : Array(bytes[entry.keyStart..<entry.keyStart + entry.keyCount])
                    let value = Array(bytes[entry.valueStart..<entry.valueStart + entry.valueCount])
                    let pending = Pending(
                        record: Outgoing(topic: topic, key: key, value: value),
                        failures: 0,
                        acknowledged: .token(entry.delivery)
                    )
                    refused.append((pending, refusal.error))
                }
                start = end
            }
        }
        if !refused.isEmpty { settle(refused, deliveriesSeen: seen) }
    }

    /// Records a batch's produce refused: a full queue waits for room, anything else is retried
    /// after a backoff (`failed`).
    private func settle(_ refused: [(Pending, KafkaError)], deliveriesSeen seen: UInt64) {
        var waiting: [Pending] = []
        for (pending, error) in refused {
            if error.code == .queueFull {
                waiting.append(pending)
            } else {
                failed(pending, error: error)
            }
        }
        waitForRoom(waiting, deliveriesSeen: seen)
    }
}
