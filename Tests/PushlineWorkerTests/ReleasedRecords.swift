import PushlineKafka
import Synchronization

@testable import PushlineWorker

/// What a pipeline released to the consumer: records completed (with their weights) and given
/// up, in order.
final class ReleasedRecords: Sendable {
    private let state = Mutex<(completed: [(id: RecordID, weight: Int)], abandoned: [RecordID], kept: [RecordID: ResumedJob])>(
        ([], [], [:])
    )

    func complete(_ records: [(id: RecordID, weight: Int)]) { state.withLock { $0.completed.append(contentsOf: records) } }
    func abandon(_ id: RecordID, resumable: ResumedJob? = nil) {
        state.withLock {
            $0.abandoned.append(id)
            $0.kept[id] = resumable
        }
    }

    var completed: [(id: RecordID, weight: Int)] { state.withLock { $0.completed } }
    var completedOffsets: [Int64] { completed.map(\.id.offset) }
    var abandoned: [RecordID] { state.withLock { $0.abandoned } }
    /// What each abandoned record kept to do only the rest of its work (`ResumedJob`).
    var kept: [RecordID: ResumedJob] { state.withLock { $0.kept } }
}
