import PushlineKafka
import Synchronization

/// What a pipeline released to the consumer: records completed (with their weights) and given
/// up, in order.
final class ReleasedRecords: Sendable {
    private let state = Mutex<(completed: [(id: RecordID, weight: Int)], abandoned: [RecordID])>(([], []))

    func complete(_ records: [(id: RecordID, weight: Int)]) { state.withLock { $0.completed.append(contentsOf: records) } }
    func abandon(_ id: RecordID) { state.withLock { $0.abandoned.append(id) } }

    var completed: [(id: RecordID, weight: Int)] { state.withLock { $0.completed } }
    var completedOffsets: [Int64] { completed.map(\.id.offset) }
    var abandoned: [RecordID] { state.withLock { $0.abandoned } }
}
