/// Which offset of one partition may be stored, given records taken in offset order and
/// completed in any order.
///
/// Invariant: `storableOffset` is one past the highest offset `h` such that every record taken
/// with an offset `<= h` is completed; it never passes an incomplete record. Offsets need not
/// be contiguous (compaction and transaction markers leave gaps): contiguity is over the taken
/// records. Pure value, no I/O: the consumer drives it under its lock.
public struct OffsetTracker: Sendable, Hashable {
    /// What `take` did.
    public enum TakeResult: Sendable, Hashable {
        /// The record is now in flight.
        case tracked
        /// The offset was not above the last taken one (the fetch position was rewound):
        /// everything in flight was forgotten and tracking restarts at this record.
        case restarted
    }

    /// What `complete` did.
    public enum CompleteResult: Sendable, Hashable {
        /// The contiguous completed prefix grew: store this offset (one past its end).
        case advanced(storeOffset: Int64)
        /// Recorded; a lower record is still in flight, so nothing new may be stored.
        case pending
        /// The offset is not in flight here (never taken, already completed or forgotten).
        case ignored
    }

    // In-flight offsets in taken (= ascending) order from `head`; `done[i]` marks completion.
    // Completed prefixes are dropped by advancing `head`; storage is compacted lazily.
    private var offsets: [Int64] = []
    private var done: [Bool] = []
    /// Each completed record's weight (what the caller counts per record: notifications).
    private var weights: [Int] = []
    private var head = 0
    private var completedAhead = 0

    /// The total weight of the completed prefix (the records below `storableOffset`), since the
    /// tracker started.
    public private(set) var prefixWeight = 0

    /// One past the end of the contiguous completed prefix; nil until a record completes.
    public private(set) var storableOffset: Int64?

    public init() {}

    /// Records taken and not yet part of the completed prefix.
    public var inFlightCount: Int { offsets.count - head - completedAhead }

    /// The highest offset taken so far.
    public var lastTaken: Int64? { offsets.last ?? lastTakenBeforeCompaction }
    private var lastTakenBeforeCompaction: Int64?

    /// The records taken above the completed prefix that completed (ahead of one still in
    /// flight), with their weights, in offset order.
    public var completedAboveStorable: [(offset: Int64, weight: Int)] {
        (head..<offsets.count).filter { done[$0] }.map { (offsets[$0], weights[$0]) }
    }

    /// Takes the next record of the partition (in offset order).
    public mutating func take(_ offset: Int64) -> TakeResult {
        if let last = lastTaken, offset <= last {
            self = OffsetTracker()
            append(offset)
            return .restarted
        }
        append(offset)
        return .tracked
    }

    /// Marks a taken record completed; `weight` counts toward `prefixWeight` once the prefix
    /// covers it.
    public mutating func complete(_ offset: Int64, weight: Int = 1) -> CompleteResult {
        guard let index = indexOf(offset), !done[index] else { return .ignored }
        done[index] = true
        weights[index] = weight
        guard index == head else {
            completedAhead += 1
            return .pending
        }
        var end = head
        while end < offsets.count && done[end] {
            prefixWeight += weights[end]
            end += 1
        }
        completedAhead -= (end - head - 1)
        let store = offsets[end - 1] + 1
        head = end
        storableOffset = store
        compactIfWorthIt()
        return .advanced(storeOffset: store)
    }

    private mutating func append(_ offset: Int64) {
        offsets.append(offset)
        done.append(false)
        weights.append(0)
    }

    private func indexOf(_ offset: Int64) -> Int? {
        // A partition's offsets are usually consecutive (gaps come from compaction and
        // transaction markers): then the offset's distance from the first in flight is its index.
        if head < offsets.count, offset >= offsets[head] {
            let guess = head &+ Int(truncatingIfNeeded: offset &- offsets[head])
            if guess >= head, guess < offsets.count, offsets[guess] == offset { return guess }
        }
        var low = head
        var high = offsets.count
        while low < high {
            let mid = (low + high) / 2
            if offsets[mid] < offset { low = mid + 1 } else { high = mid }
        }
        return low < offsets.count && offsets[low] == offset ? low : nil
    }

    private mutating func compactIfWorthIt() {
        guard head > 1024, head * 2 > offsets.count else {
            if head == offsets.count, head > 0 {
                lastTakenBeforeCompaction = offsets.last
                offsets.removeAll(keepingCapacity: true)
                done.removeAll(keepingCapacity: true)
                weights.removeAll(keepingCapacity: true)
                head = 0
            }
            return
        }
        lastTakenBeforeCompaction = offsets.last
        offsets.removeFirst(head)
        done.removeFirst(head)
        weights.removeFirst(head)
        head = 0
    }
}
