/// The consumer's per-partition offset bookkeeping across rebalances, as a pure value.
///
/// Invariants: records are handed out only for partitions that are assigned and not being
/// revoked, and started only while that still holds; a completion counts only for the generation
/// it was handed out under; an offset is reported for storing only while its partition is
/// assigned, and never past an incomplete record (started or not).
///
/// Weights: each completion carries a weight (the worker's: the job's notifications), so that
/// `uncommittedWeight` says how much completed work a crash now would make the group redo.
public struct AssignmentState: Sendable {
    private struct Partition: Sendable {
        var generation: UInt64
        var tracker = OffsetTracker()
        var revoking = false
        /// The last offset reported by `takeOffsetsToStore`/`finishRevoke`.
        var reported: Int64?
        /// Records started and not completed: what a revoke waits for.
        var started = 0
        /// Completed weight, and the part of it below the last committed offset.
        var completedWeight = 0
        var committedWeight = 0
        /// Offsets reported for storing and not yet known committed, each with the tracker's
        /// prefix weight at that offset, ascending.
        var storeMarks: [(offset: Int64, prefixWeight: Int)] = []
        /// In `dirty`: its storable offset may have moved since `takeOffsetsToStore`.
        var isDirty = false
        /// The first offset taken under this assignment (where its fetch began), and the last
        /// offset the broker confirmed committing: where the group's committed offset is.
        var fetchStart: Int64?
        var committedOffset: Int64?
        /// This member keeps what it finished of the partition before losing it (`lost`): each
        /// record taken is looked up there until the memory is spent.
        var resuming = false
    }

    private var partitions: [TopicPartition: Partition] = [:]
    /// Partitions whose storable offset advanced, each once (its `isDirty` says whether it is
    /// here): a flag in the partition's state rather than a set, which hashed the partition again
    /// for every completed record.
    private var dirty: [TopicPartition] = []
    /// The partition looked up last, and where it is in `partitions`: the records of a poll
    /// batch, a run and a group come in runs of one partition, so most look-ups (three per record)
    /// end here without hashing. Forgotten whenever partitions are added or removed (which can
    /// move every index), and when a revoke begins (marking partitions through the subscript).
    private var lastLookup: (topicPartition: TopicPartition, index: Dictionary<TopicPartition, Partition>.Index)?
    private var nextGeneration: UInt64
    /// What this member keeps of partitions whose assignment was lost (`LostPartition`), and
    /// for how long.
    private var lost: [TopicPartition: LostPartition] = [:]
    private let lostRetention: Duration

    /// What the memory of lost partitions did, since the start: records skipped as completed,
    /// handed out to be done only in part, and memories forgotten (another member committed, or
    /// the offsets moved, or it expired).
    public private(set) var lostRecordsSkipped = 0
    public private(set) var lostRecordsResumed = 0
    public private(set) var lostMemoriesForgotten = 0

    /// The weight of records completed on assigned partitions whose offsets are not committed.
    public private(set) var uncommittedWeight = 0

    /// `firstGeneration`: the first assigned partition's generation (`KafkaConsumerConfiguration`);
    /// `lostRetention`: how long what was finished on a lost partition is kept for its return.
    public init(firstGeneration: UInt64 = 1, lostRetention: Duration = .seconds(600)) {
        self.nextGeneration = firstGeneration
        self.lostRetention = lostRetention
    }

    /// Runs `body` on a partition's state in place. Reading a field through
    /// `partitions.values[index]` copies the whole state first (its tracker's arrays retained and
    /// released), once per record on the hot path; the modify accessor does not.
    private mutating func inPlace<Result>(
        _ index: Dictionary<TopicPartition, Partition>.Index,
        _ body: (inout Partition) -> Result
    ) -> Result {
        body(&partitions.values[index])
    }

    private mutating func index(of topicPartition: TopicPartition) -> Dictionary<TopicPartition, Partition>.Index? {
        if let lastLookup, lastLookup.topicPartition.partition == topicPartition.partition,
            lastLookup.topicPartition.topic == topicPartition.topic
        {
            return lastLookup.index
        }
        guard let index = partitions.index(forKey: topicPartition) else { return nil }
        lastLookup = (topicPartition, index)
        return index
    }

    /// The partitions currently assigned (including those being revoked).
    public var assigned: [TopicPartition] { Array(partitions.keys) }

    /// How many partitions are assigned (without building `assigned`).
    public var assignedCount: Int { partitions.count }

    /// Starts tracking newly assigned partitions, each under a fresh generation.
    public mutating func assign(_ added: [TopicPartition]) {
        lastLookup = nil
        for topicPartition in added {
            partitions[topicPartition] = Partition(generation: nextGeneration, resuming: lost[topicPartition] != nil)
            nextGeneration += 1
        }
    }

    /// Takes a fetched record; nil means: drop it (partition unassigned or being revoked, or its
    /// work finished before the partition was lost and came back: it is completed here). A
    /// record done in part before such a loss comes with what its owner kept (`resumed`).
    public mutating func take(
        _ topicPartition: TopicPartition,
        offset: Int64,
        resumed: inout (any AnyObject & Sendable)?
    ) -> RecordID? {
        guard let index = index(of: topicPartition) else { return nil }
        var forgotten = 0
        var resuming = false
        let generation: UInt64? = inPlace(index) { partition in
            guard !partition.revoking else { return nil }
            if partition.tracker.take(offset) == .restarted {
                // The fetch position was rewound: what was tracked is forgotten, weights included.
                forgotten = Self.forgetWeights(&partition)
                partition.fetchStart = nil
                partition.committedOffset = nil
            }
            if partition.fetchStart == nil { partition.fetchStart = offset }
            resuming = partition.resuming
            return partition.generation
        }
        uncommittedWeight -= forgotten
        guard let generation else { return nil }
        let id = RecordID(topic: topicPartition.topic, partition: topicPartition.partition, offset: offset, generation: generation)
        if resuming { return takeKept(id, resumed: &resumed) }
        return id
    }

    /// `take(_:offset:resumed:)` for a caller that hands nothing kept on (tests).
    public mutating func take(_ topicPartition: TopicPartition, offset: Int64) -> RecordID? {
        var resumed: (any AnyObject & Sendable)?
        return take(topicPartition, offset: offset, resumed: &resumed)
    }

    /// `take` on a partition that came back after a loss: the record is looked up in what was
    /// kept of it.
    private mutating func takeKept(_ id: RecordID, resumed: inout (any AnyObject & Sendable)?) -> RecordID? {
        let topicPartition = id.topicPartition
        guard var memory = lost.removeValue(forKey: topicPartition) else {
            partitions[topicPartition]?.resuming = false
            return id
        }
        lastLookup = nil
        guard let refetched = memory.refetched(id.offset) else {
            // Another member committed meanwhile, or the offsets moved: it owns that work.
            lostMemoriesForgotten += 1
            partitions[topicPartition]?.resuming = false
            return id
        }
        if memory.isSpent(after: id.offset) {
            partitions[topicPartition]?.resuming = false
        } else {
            lost[topicPartition] = memory
        }
        switch refetched {
        case .again:
            return id
        case .resumable(let kept):
            lostRecordsResumed += 1
            resumed = kept
            return id
        case .completed(let weight):
            // Its results are in Kafka already: completed at once, never handed out.
            lostRecordsSkipped += 1
            guard let index = partitions.index(forKey: topicPartition) else { return nil }
            var newlyDirty = false
            let result = inPlace(index) { partition in
                let result = partition.tracker.complete(id.offset, weight: weight)
                guard result != .ignored else { return result }
                partition.completedWeight += weight
                if case .advanced = result, !partition.isDirty {
                    partition.isDirty = true
                    newlyDirty = true
                }
                return result
            }
            if result != .ignored { uncommittedWeight += weight }
            if newlyDirty { dirty.append(topicPartition) }
            return nil
        }
    }

    /// Starts work on a handed-out record: false when its partition is being revoked (or gone)
    /// since, and the record must be skipped (the partition's next owner gets it).
    public mutating func start(_ id: RecordID) -> Bool {
        guard let index = index(of: id.topicPartition) else { return false }
        return inPlace(index) { partition in
            guard partition.generation == id.generation, !partition.revoking else { return false }
            partition.started += 1
            return true
        }
    }

    /// Marks a started record completed, with its weight; true when a new offset became storable.
    public mutating func complete(_ id: RecordID, weight: Int = 1) -> Bool {
        let topicPartition = id.topicPartition
        guard let index = index(of: topicPartition) else {
            lost[topicPartition]?.completedLate(id, weight: weight)
            return false
        }
        var newlyDirty = false
        let result: OffsetTracker.CompleteResult? = inPlace(index) { partition in
            guard partition.generation == id.generation else { return nil }
            let result = partition.tracker.complete(id.offset, weight: weight)
            if result == .ignored { return result }
            partition.started = max(0, partition.started - 1)
            partition.completedWeight += weight
            if case .advanced = result, !partition.isDirty {
                partition.isDirty = true
                newlyDirty = true
            }
            return result
        }
        guard let result else {
            // A record of an earlier assignment: kept if that assignment was lost.
            lost[topicPartition]?.completedLate(id, weight: weight)
            return false
        }
        guard result != .ignored else { return false }
        uncommittedWeight += weight
        guard case .advanced = result else { return false }
        if newlyDirty { dirty.append(topicPartition) }
        return true
    }

    /// Gives up a started record without completing it: a revoke stops waiting for it, and the
    /// offset never advances past it (the partition's next owner does it). `resumable`: what its
    /// owner keeps to do only the rest of it, kept if the record's assignment was lost and handed
    /// out with the record if the partition comes back to this member (`take`).
    public mutating func abandon(_ id: RecordID, resumable: (any AnyObject & Sendable)? = nil) {
        let current = index(of: id.topicPartition).map { index in
            inPlace(index) { partition in
                guard partition.generation == id.generation else { return false }
                partition.started = max(0, partition.started - 1)
                return true
            }
        }
        if current != true { lost[id.topicPartition]?.abandonedLate(id, resumable: resumable) }
    }

    /// The generations `subset`'s records were handed out under (`RecordID.generation`).
    public func generations(_ subset: [TopicPartition]) -> [UInt64] {
        subset.compactMap { partitions[$0]?.generation }
    }

    /// Records started and not yet completed on `subset` (all partitions when nil): what a
    /// revoke (or close) waits for.
    public func started(_ subset: [TopicPartition]? = nil) -> Int {
        guard let subset else { return partitions.values.reduce(0) { $0 + $1.started } }
        return subset.reduce(0) { $0 + (partitions[$1]?.started ?? 0) }
    }

    /// Offsets are committed: their completed weight is no longer `uncommittedWeight`.
    public mutating func committed(_ offsets: [(TopicPartition, Int64)]) {
        for (topicPartition, offset) in offsets {
            guard let index = partitions.index(forKey: topicPartition) else { continue }
            var partition = partitions.values[index]
            var covered = 0
            while covered < partition.storeMarks.count && partition.storeMarks[covered].offset <= offset {
                covered += 1
            }
            partition.committedOffset = max(partition.committedOffset ?? offset, offset)
            guard covered > 0 else {
                partitions.values[index] = partition
                continue
            }
            let weight = partition.storeMarks[covered - 1].prefixWeight
            partition.storeMarks.removeFirst(covered)
            uncommittedWeight -= weight - partition.committedWeight
            partition.committedWeight = weight
            partitions.values[index] = partition
        }
    }

    /// Keeps what was finished of `topicPartition`, whose assignment (`state`) was lost at `now`,
    /// with what an `earlier` loss kept of it and this assignment has not fetched again.
    private mutating func keep(
        _ state: Partition,
        of topicPartition: TopicPartition,
        earlier: LostPartition?,
        now: ContinuousClock.Instant
    ) {
        guard let fetchStart = state.fetchStart, let lastTaken = state.tracker.lastTaken else {
            // Nothing fetched under this assignment: what an earlier loss kept still holds.
            if let earlier { lost[topicPartition] = earlier }
            return
        }
        // The committed offset is the last one confirmed, or one this member asked for and had
        // no answer about.
        let resumeOffsets = [state.committedOffset ?? fetchStart] + state.storeMarks.map(\.offset)
        var records: [Int64: LostPartition.Record] = [:]
        for (offset, weight) in state.tracker.completedAboveStorable {
            records[offset] = .completed(weight: weight)
        }
        let memory = LostPartition(
            generation: state.generation,
            resumeOffsets: resumeOffsets,
            completedBelow: state.tracker.storableOffset ?? resumeOffsets[0],
            lastTaken: lastTaken,
            prefixWeight: state.tracker.prefixWeight - state.committedWeight,
            records: records,
            expires: now + lostRetention
        )
        lost[topicPartition] = earlier.map { $0.carried(into: memory) } ?? memory
    }

    /// Forgets what was kept of lost partitions that did not come back within `lostRetention`.
    public mutating func forgetExpiredLost(now: ContinuousClock.Instant) {
        guard !lost.isEmpty else { return }
        for (topicPartition, memory) in lost where memory.expires <= now {
            lost[topicPartition] = nil
            lostMemoriesForgotten += 1
            if let index = partitions.index(forKey: topicPartition) { partitions.values[index].resuming = false }
        }
    }

    /// Lost partitions whose finished work is kept, and the records kept above their completed
    /// prefixes.
    public var lostKept: (partitions: Int, records: Int) {
        (lost.count, lost.values.reduce(0) { $0 + $1.keptRecords })
    }

    /// Clears a partition's weights; returns the uncommitted weight it had.
    private static func forgetWeights(_ partition: inout Partition) -> Int {
        let forgotten = partition.completedWeight - partition.committedWeight
        partition.completedWeight = 0
        partition.committedWeight = 0
        partition.storeMarks = []
        return forgotten
    }

    /// Records handed out and not yet completed on `subset` (all partitions when nil).
    public func inFlight(_ subset: [TopicPartition]? = nil) -> Int {
        guard let subset else { return partitions.values.reduce(0) { $0 + $1.tracker.inFlightCount } }
        return subset.reduce(0) { $0 + (partitions[$1]?.tracker.inFlightCount ?? 0) }
    }

    /// Offsets that advanced since the last call, for librdkafka to store for the next commit.
    public mutating func takeOffsetsToStore() -> [(TopicPartition, Int64)] {
        var result: [(TopicPartition, Int64)] = []
        for topicPartition in dirty {
            guard let index = partitions.index(forKey: topicPartition) else { continue }
            partitions.values[index].isDirty = false
            guard let offset = partitions.values[index].tracker.storableOffset, offset != partitions.values[index].reported
            else { continue }
            partitions.values[index].reported = offset
            partitions.values[index].storeMarks.append((offset, partitions.values[index].tracker.prefixWeight))
            result.append((topicPartition, offset))
        }
        dirty.removeAll(keepingCapacity: true)
        return result
    }

    /// Stops handing out records of `revoked`; their in-flight records may still complete.
    public mutating func beginRevoke(_ revoked: [TopicPartition]) {
        lastLookup = nil
        for topicPartition in revoked {
            partitions[topicPartition]?.revoking = true
        }
    }

    /// Forgets `revoked` and returns their last storable offsets (for a final store and commit),
    /// whether or not they were reported before. Later completions of their records are ignored,
    /// unless the assignment was `lost` at `now`: then what was finished of each partition, and
    /// what finishes later, is kept (`LostPartition`) for `lostRetention`, in case the partition
    /// comes back to this member unchanged.
    public mutating func finishRevoke(
        _ revoked: [TopicPartition],
        lost isLost: Bool = false,
        now: ContinuousClock.Instant = .now
    ) -> [(TopicPartition, Int64)] {
        var result: [(TopicPartition, Int64)] = []
        for topicPartition in revoked {
            guard var state = partitions.removeValue(forKey: topicPartition) else { continue }
            lastLookup = nil
            let earlier = lost.removeValue(forKey: topicPartition)
            if isLost {
                keep(state, of: topicPartition, earlier: earlier, now: now)
            }
            uncommittedWeight -= Self.forgetWeights(&state)
            if state.isDirty { dirty.removeAll { $0 == topicPartition } }
            if let offset = state.tracker.storableOffset {
                result.append((topicPartition, offset))
            }
        }
        return result
    }
}
