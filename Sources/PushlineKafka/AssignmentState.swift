/// The consumer's per-partition offset bookkeeping across rebalances, as a pure value.
///
/// Invariants: records are handed out only for partitions that are assigned and not being
/// revoked; a completion counts only for the generation it was handed out under; an offset is
/// reported for storing only while its partition is assigned, and never past an incomplete record.
public struct AssignmentState: Sendable {
    private struct Partition: Sendable {
        var generation: UInt64
        var tracker = OffsetTracker()
        var revoking = false
        /// The last offset reported by `takeOffsetsToStore`/`finishRevoke`.
        var reported: Int64?
    }

    private var partitions: [TopicPartition: Partition] = [:]
    private var dirty: Set<TopicPartition> = []
    private var nextGeneration: UInt64 = 1

    public init() {}

    /// The partitions currently assigned (including those being revoked).
    public var assigned: [TopicPartition] { Array(partitions.keys) }

    /// Starts tracking newly assigned partitions, each under a fresh generation.
    public mutating func assign(_ added: [TopicPartition]) {
        for topicPartition in added {
            partitions[topicPartition] = Partition(generation: nextGeneration)
            nextGeneration += 1
        }
    }

    /// Takes a fetched record; nil means: drop it (partition unassigned or being revoked).
    public mutating func take(_ topicPartition: TopicPartition, offset: Int64) -> RecordID? {
        // Mutated in place through the index: a copy out of the dictionary and back would share,
        // and so copy, the tracker's arrays on every record (O(in flight) per take).
        guard let index = partitions.index(forKey: topicPartition), !partitions.values[index].revoking else { return nil }
        _ = partitions.values[index].tracker.take(offset)
        return RecordID(
            topic: topicPartition.topic,
            partition: topicPartition.partition,
            offset: offset,
            generation: partitions.values[index].generation
        )
    }

    /// Marks a record completed; true when a new offset became storable.
    public mutating func complete(_ id: RecordID) -> Bool {
        let topicPartition = id.topicPartition
        guard let index = partitions.index(forKey: topicPartition), partitions.values[index].generation == id.generation
        else { return false }
        let result = partitions.values[index].tracker.complete(id.offset)
        guard case .advanced = result else { return false }
        dirty.insert(topicPartition)
        return true
    }

    /// Records handed out and not yet completed on `subset` (all partitions when nil).
    public func inFlight(_ subset: [TopicPartition]? = nil) -> Int {
        guard let subset else { return partitions.values.reduce(0) { $0 + $1.tracker.inFlightCount } }
        return subset.reduce(0) { $0 + (partitions[$1]?.tracker.inFlightCount ?? 0) }
    }

    /// Offsets that advanced since the last call, to pass to `rd_kafka_offsets_store`.
    public mutating func takeOffsetsToStore() -> [(TopicPartition, Int64)] {
        var result: [(TopicPartition, Int64)] = []
        for topicPartition in dirty {
            guard let index = partitions.index(forKey: topicPartition),
                let offset = partitions.values[index].tracker.storableOffset, offset != partitions.values[index].reported
            else { continue }
            partitions.values[index].reported = offset
            result.append((topicPartition, offset))
        }
        dirty.removeAll(keepingCapacity: true)
        return result
    }

    /// Stops handing out records of `revoked`; their in-flight records may still complete.
    public mutating func beginRevoke(_ revoked: [TopicPartition]) {
        for topicPartition in revoked {
            partitions[topicPartition]?.revoking = true
        }
    }

    /// Forgets `revoked` and returns their last storable offsets (for a final store and commit),
    /// whether or not they were reported before. Later completions of their records are ignored.
    public mutating func finishRevoke(_ revoked: [TopicPartition]) -> [(TopicPartition, Int64)] {
        var result: [(TopicPartition, Int64)] = []
        for topicPartition in revoked {
            guard let state = partitions.removeValue(forKey: topicPartition) else { continue }
            dirty.remove(topicPartition)
            if let offset = state.tracker.storableOffset {
                result.append((topicPartition, offset))
            }
        }
        return result
    }
}
