/// What a member keeps of a partition whose assignment was lost (librdkafka's session with the
/// coordinator timed out, as in a Kafka outage), so that when the partition comes back to it
/// unchanged, the records it finished are not done again.
///
/// Kept: where the group's committed offset is if no other member committed since
/// (`resumeOffsets`), the offset below which every record taken was completed
/// (`completedBelow`), and, above it, each record completed or partly done, including those that
/// end after the loss (`completedLate`, `abandonedLate`: their results reached Kafka, or the
/// owner kept what it needs to do only the rest). When the partition is assigned to this member
/// again, its first record fetched must be at a resume offset (`refetched`): else another member
/// committed meanwhile, or the offsets moved, and all of it is forgotten. Nothing is kept of a
/// record that was not finished: it is handed out again, so nothing can be lost; a record is
/// skipped only when its results are in Kafka (at-least-once).
///
/// Pure value, under the consumer's lock (`AssignmentState`).
struct LostPartition: Sendable {
    /// What is known of one record at or above `completedBelow`.
    enum Record: Sendable {
        /// Its work is done and its results are in Kafka; `weight`: its notifications.
        case completed(weight: Int)
        /// Part of its work is done and in Kafka: what its owner kept to do only the rest.
        case resumable(any AnyObject & Sendable)
    }

    /// What to do with a record of the partition fetched again.
    enum Refetched {
        /// Skip it: it was completed (its weight, or a share of the completed prefix's).
        case completed(weight: Int)
        /// Hand it out with what its owner kept of it.
        case resumable(any AnyObject & Sendable)
        /// Hand it out as any other record.
        case again
    }

    /// The generations the partition's records were handed out under before the loss (two when
    /// it was lost again before its kept records were fetched again).
    private(set) var generations: [UInt64]
    /// Where the group's committed offset is if no other member committed: the last offset the
    /// broker confirmed committing (or where the assignment's fetch began), and the offsets this
    /// member asked to commit with no answer (they may have been committed).
    let resumeOffsets: [Int64]
    /// Every record taken from the lowest resume offset up to here (exclusive) was completed.
    let completedBelow: Int64
    /// The highest offset taken before the loss: the memory is spent once it is fetched again.
    private(set) var lastTaken: Int64
    /// The completed prefix's uncommitted weight not yet handed to a skipped record.
    private var prefixWeight: Int
    private var records: [Int64: Record]
    /// When the memory is forgotten if the partition has not come back.
    let expires: ContinuousClock.Instant
    /// The first record fetched after the partition came back was at a resume offset.
    private(set) var verified = false

    init(
        generation: UInt64,
        resumeOffsets: [Int64],
        completedBelow: Int64,
        lastTaken: Int64,
        prefixWeight: Int,
        records: [Int64: Record],
        expires: ContinuousClock.Instant
    ) {
        self.generations = [generation]
        self.resumeOffsets = resumeOffsets
        self.completedBelow = completedBelow
        self.lastTaken = lastTaken
        self.prefixWeight = prefixWeight
        self.records = records
        self.expires = expires
    }

    /// Records kept as completed or resumable above the completed prefix.
    var keptRecords: Int { records.count }

    /// A record of the lost assignment completed after the loss: its results are in Kafka.
    mutating func completedLate(_ id: RecordID, weight: Int) {
        guard generations.contains(id.generation), id.offset >= completedBelow else { return }
        records[id.offset] = .completed(weight: weight)
    }

    /// A record of the lost assignment was given up after the loss, with what its owner kept to
    /// do only the rest (nil: nothing; it is done again whole).
    mutating func abandonedLate(_ id: RecordID, resumable: (any AnyObject & Sendable)?) {
        guard generations.contains(id.generation), id.offset >= completedBelow, let resumable else { return }
        records[id.offset] = .resumable(resumable)
    }

    /// A record of the partition fetched after it came back to this member, in offset order;
    /// nil when the memory must be forgotten (the first record fetched is not where this member
    /// left the partition: another member committed, or the offsets moved).
    mutating func refetched(_ offset: Int64) -> Refetched? {
        if !verified {
            guard resumeOffsets.contains(offset) else { return nil }
            verified = true
        }
        if offset < completedBelow {
            // Every record below was completed; the prefix's weight is shared out over its
            // offsets, the last one taking the rest.
            let share = prefixWeight / Int(max(1, completedBelow - offset))
            prefixWeight -= share
            return .completed(weight: share)
        }
        switch records.removeValue(forKey: offset) {
        case .completed(let weight)?: return .completed(weight: weight)
        case .resumable(let kept)?: return .resumable(kept)
        case nil: return .again
        }
    }

    /// Whether fetching `offset` again spent the memory: nothing kept lies above it.
    func isSpent(after offset: Int64) -> Bool {
        offset >= lastTaken
    }

    /// The partition was lost again before this memory was spent: `newer` (what was kept of the
    /// later assignment) also keeps this memory's records above what the later assignment
    /// fetched, so they are not done a third time.
    func carried(into newer: LostPartition) -> LostPartition {
        var merged = newer
        merged.generations += generations
        for (offset, record) in records where offset > newer.lastTaken {
            merged.records[offset] = record
        }
        merged.lastTaken = max(newer.lastTaken, lastTaken)
        return merged
    }
}
