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
    /// Each batch's observer and first index, by its place in `waiting`, and the indices
    /// `cancel(where:)` ended (answered then, skipped after).
    private let observers = Mutex<[(observer: (any APNSBatchObserver)?, first: Int, ended: Set<Int>)]>([])
    private let sentBatches = Mutex<[(firstIndex: Int, batch: APNSNotificationBatch)]>([])

    /// Every batch sent so far, with the index its observer hears as its notification 0.
    var batches: [(firstIndex: Int, batch: APNSNotificationBatch)] { sentBatches.withLock { $0 } }

    init(outcomeScope: (any APNSOutcomeScope)?) {
        self.outcomeScope = outcomeScope
    }

    /// Runs at the start of each `send(contentsOf:)`, before the batches are kept: what happens
    /// between the intake's checks and the pool's hand-over.
    let beforeSend = Mutex<(@Sendable () -> Void)?>(nil)

    func send(contentsOf submissions: consuming [APNSBatchSubmission]) {
        if let hook = beforeSend.withLock({ $0 }) { hook() }
        let batches = submissions.map { (firstIndex: $0.firstIndex, batch: $0.batch) }
        sentBatches.withLock { $0.append(contentsOf: batches) }
        let sent = submissions.map { submission in
            let (observer, first) = (submission.observer, submission.firstIndex)
            return (
                count: submission.batch.count,
                answer: { @Sendable (index: Int, outcome: APNSOutcome) in
                    observer.notificationEnded(first + index, outcome: outcome)
                }
            )
        }
        let kept = submissions.map { (observer: Optional($0.observer), first: $0.firstIndex, ended: Set<Int>()) }
        waiting.withLock { waiting in
            waiting.append(contentsOf: sent)
            observers.withLock { $0.append(contentsOf: kept) }
        }
    }

    /// Ends at once as `cancelled` the waiting notifications `filter` picks, as the real pool
    /// does with those that have not gone out.
    @discardableResult
    func cancel(where filter: @escaping APNSCancelFilter) -> Int {
        var ended: [(@Sendable (Int, APNSOutcome) -> Void, Int)] = []
        waiting.withLock { waiting in
            observers.withLock { observers in
                for place in waiting.indices {
                    guard let observer = observers[place].observer else { continue }
                    for index in 0..<waiting[place].count
                    where !observers[place].ended.contains(index)
                        && observer.cancelKey(observers[place].first + index).map(filter) == true
                    {
                        observers[place].ended.insert(index)
                        ended.append((waiting[place].answer, index))
                    }
                }
            }
        }
        let outcome = APNSOutcome(noResponse: .cancelled, attempts: 0, latencyMilliseconds: 0)
        func tell() { for (answer, index) in ended { answer(index, outcome) } }
        if let outcomeScope { outcomeScope.withOutcomeRun(tell) } else { tell() }
        return ended.count
    }

    func send(_ notifications: [APNSNotification], options: APNSSendOptions, observer: any APNSBatchObserver) {
        waiting.withLock { waiting in
            waiting.append((notifications.count, { index, outcome in observer.notificationEnded(index, outcome: outcome) }))
            observers.withLock { $0.append((observer, 0, [])) }
        }
    }

    /// Notifications sent and not answered yet.
    var unanswered: Int {
        waiting.withLock { $0.reduce(0) { $0 + $1.count } } - observers.withLock { $0.reduce(0) { $0 + $1.ended.count } }
    }

    /// Answers every notification sent so far, in one run: `outcome(n)` for the `n`-th of them
    /// (counting from 0 across batches, in the order they were sent).
    func answerAll(_ outcome: (Int) -> APNSOutcome) {
        let (sent, ended) = waiting.withLock { taken in
            defer { taken = [] }
            return (
                taken,
                observers.withLock { observers in
                    defer { observers = [] }
                    return observers.map(\.ended)
                }
            )
        }
        func tell() {
            var n = 0
            for (place, batch) in sent.enumerated() {
                for index in 0..<batch.count where !ended[place].contains(index) {
                    batch.answer(index, outcome(n))
                    n += 1
                }
            }
        }
        if let outcomeScope { outcomeScope.withOutcomeRun(tell) } else { tell() }
    }
}
