import PushlineAPNS
import PushlineAPNSCore
import Synchronization

@testable import PushlineWorker

/// An APNs client that keeps the batches and broadcasts it is given; the test answers them
/// (`answerAll`), inside a run of outcomes as the real client does when it has a scope.
final class FakeSender: NotificationSender {
    let apnsEnvironment = "production"
    private let outcomeScope: (any APNSOutcomeScope)?
    private let waiting = Mutex<[(count: Int, answer: @Sendable (Int, APNSOutcome) -> Void)]>([])
    private let kept = Mutex<[(firstIndex: Int, batch: APNSNotificationBatch)]>([])

    /// Every batch sent so far, with the index its observer hears as its notification 0.
    var batches: [(firstIndex: Int, batch: APNSNotificationBatch)] { kept.withLock { $0 } }

    init(outcomeScope: (any APNSOutcomeScope)?) {
        self.outcomeScope = outcomeScope
    }

    func send(contentsOf submissions: consuming [APNSBatchSubmission]) {
        let batches = submissions.map { (firstIndex: $0.firstIndex, batch: $0.batch) }
        kept.withLock { $0.append(contentsOf: batches) }
        let sent = submissions.map { submission in
            let (observer, first) = (submission.observer, submission.firstIndex)
            return (
                count: submission.batch.count,
                answer: { @Sendable (index: Int, outcome: APNSOutcome) in
                    observer.notificationEnded(first + index, outcome: outcome)
                }
            )
        }
        waiting.withLock { $0.append(contentsOf: sent) }
    }

    func send(_ notifications: [APNSNotification], options: APNSSendOptions, completion: @escaping @Sendable (Int, APNSOutcome) -> Void) {
        waiting.withLock { $0.append((notifications.count, completion)) }
    }

    /// Notifications sent and not answered yet.
    var unanswered: Int { waiting.withLock { $0.reduce(0) { $0 + $1.count } } }

    /// Answers every notification sent so far, in one run: `outcome(n)` for the `n`-th of them
    /// (counting from 0 across batches, in the order they were sent).
    func answerAll(_ outcome: (Int) -> APNSOutcome) {
        let sent = waiting.withLock { taken in
            defer { taken = [] }
            return taken
        }
        func tell() {
            var n = 0
            for batch in sent {
                for index in 0..<batch.count {
                    batch.answer(index, outcome(n))
                    n += 1
                }
            }
        }
        if let outcomeScope { outcomeScope.withOutcomeRun(tell) } else { tell() }
    }
}
