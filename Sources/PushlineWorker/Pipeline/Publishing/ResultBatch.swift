import PushlineAPNSCore
import PushlineKafka

/// One thread's result records of one run of outcomes (`ResultPublisher.withBatch`): written back
/// to back into one buffer that the thread keeps from run to run, and produced when the run ends,
/// in one librdkafka call per topic. A record here costs no array and no produce call of its own,
/// and librdkafka reads its clocks and locks its topic once per run.
///
/// A token waits here (`afterProduce`) until its records are produced, and only then is its
/// progress asked what follows them (`tokensProduced(_:)`, at the end of the run): a job's
/// `job_done` follows its deliveries in their partition even when its tokens end in runs on
/// different threads. The batch only holds records and tokens; it calls nothing.
final class ResultBatch: @unchecked Sendable {
    // @unchecked Sendable: a batch is its thread's own, reached only through that thread's slot
    // (`ResultPublisher`'s thread-specific variable), never handed to another thread.

    /// The buffer's first size; it grows with the runs (`ResultPublisher.batchBytesKept`).
    static let initialCapacity = 16 << 10

    struct Entry {
        var topic: KafkaTopic
        /// Where the key starts in `bytes`, and its length (-1: no key).
        var keyStart: Int
        var keyCount: Int
        var valueStart: Int
        var valueCount: Int
        var delivery: ResultDelivery
    }

    // No dynamic exclusivity checks: the batch is one thread's (see above), and these are
    // touched for every record.
    /// Every record's key and value, back to back.
    @exclusivity(unchecked) var bytes = JSONWriter(capacity: ResultBatch.initialCapacity)
    @exclusivity(unchecked) private(set) var entries: [Entry] = []
    /// Tokens whose `tokensProduced(_:)` waits for their records to be produced.
    /// Consecutive tokens of one delivery (a job's tokens in one run) share an entry.
    private(set) var afterProduce: [(delivery: ResultDelivery, count: Int)] = []
    private var spareAfterProduce: [(delivery: ResultDelivery, count: Int)] = []
    /// True while a run is open on this thread.
    var isOpen = false
    /// The run's per-notification metrics, recorded when it ends (`ResultPublisher`).
    @exclusivity(unchecked) var metrics = OutcomeMetricsTally()
    /// The run's clocks, read once (`now(wall:)`): every outcome of a run ends at one moment.
    private var clocks: (wall: Int64, monotonic: MonotonicInstant)?

    /// Opens a run.
    func open() {
        isOpen = true
        clocks = nil
    }

    /// The run's wall-clock (read with `wall`, the first time) and monotonic time.
    func now(wall: () -> Int64) -> (wall: Int64, monotonic: MonotonicInstant) {
        if let clocks { return clocks }
        let read = (wall: wall(), monotonic: MonotonicInstant.now)
        clocks = read
        return read
    }

    /// Adds a record whose value `write` appends to `bytes`.
    @inline(__always)
    func append(topic: KafkaTopic, key: String?, delivery: ResultDelivery, value write: (inout JSONWriter) -> Void) {
        let keyStart = bytes.count
        if let key { bytes.rawUTF8(key) }
        let valueStart = bytes.count
        write(&bytes)
        entries.append(
            Entry(
                topic: topic,
                keyStart: keyStart,
                keyCount: key == nil ? -1 : valueStart - keyStart,
                valueStart: valueStart,
                valueCount: bytes.count - valueStart,
                delivery: delivery
            )
        )
    }

    /// `progress.tokensProduced(_:)` is asked once the records added so far are produced (at the
    /// end of the run).
    func afterProduce(_ progress: ResultDelivery) {
        if let last = afterProduce.indices.last, afterProduce[last].delivery === progress {
            afterProduce[last].count += 1
        } else {
            afterProduce.append((progress, 1))
        }
    }

    var isEmpty: Bool { entries.isEmpty }

    /// Records waiting.
    var count: Int { entries.count }

    /// Calls `body` with the entries and the bytes, then forgets both (keeping their room).
    func drainEntries(_ body: (UnsafeBufferPointer<Entry>, UnsafeRawBufferPointer) -> Void) {
        entries.withUnsafeBufferPointer { entries in
            bytes.withBytes { bytes in body(entries, bytes) }
        }
        entries.removeAll(keepingCapacity: true)
        bytes.removeAll()
    }

    /// Hands the waiting tokens to `body`, each delivery with its count, and forgets them (keeping
    /// the list's room). Call it once the records added so far are produced. Returns false when
    /// none waited.
    func takeProduced(_ body: (ResultDelivery, Int) -> Void) -> Bool {
        guard !afterProduce.isEmpty else { return false }
        swap(&afterProduce, &spareAfterProduce)
        for entry in spareAfterProduce { body(entry.delivery, entry.count) }
        spareAfterProduce.removeAll(keepingCapacity: true)
        return true
    }
}
