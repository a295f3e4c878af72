import Foundation
import Logging

/// The consumer's executor: the poll thread, which performs what `ConsumerStateMachine` decides,
/// and the calls other threads make into the machine (`start`, `complete`, `read`, close).
/// Rebalances are in ConsumerCore+Rebalance.swift, the actions in ConsumerCore+Actions.swift, the
/// close in ConsumerCore+Close.swift; every librdkafka call goes through `RDKafkaClient` and
/// `RDKafkaQueue`.
///
/// Threading: librdkafka is called only from the poll thread (run loop, rebalance callback,
/// close); other threads only touch the machine, with `condition` locked.
final class ConsumerCore: @unchecked Sendable {
    // @unchecked Sendable: the `let`s are immutable (the continuations are Sendable); `machine`,
    // `consumerQueue`, `drainWaiting` and `closeWaiters` are read and written only with
    // `condition` locked; the fields marked "poll thread" are touched only by the poll thread:
    // run() and the rebalance and commit callbacks, which librdkafka invokes from inside that
    // thread's polls and its close.
    let client: RDKafkaClient
    let configuration: KafkaConsumerConfiguration
    let logger: Logger
    let continuation: AsyncThrowingStream<KafkaConsumerEvent, any Error>.Continuation
    /// The priority lane's records (`configuration.priorityTopics`); finished with `continuation`.
    let priorityContinuation: AsyncThrowingStream<KafkaConsumerEvent, any Error>.Continuation
    let condition = NSCondition()
    /// Where the bulk partitions' records wait until the buffer has room; the consumer queue
    /// keeps rebalances, logs and the priority partitions' records, and is polled in every state.
    let bulkQueue: RDKafkaQueue
    /// Told when a revoke begins and when it gives up on started records (poll thread).
    let onRevoke: (@Sendable (RevokeNotice) -> Void)?
    /// Reads each record in librdkafka's buffer, on the poll thread (`KafkaRecordReader`).
    let reader: (any KafkaRecordReader)?

    // Guarded by `condition`.
    /// Every decision, and where the consumer is in its life (closed included).
    var machine: ConsumerStateMachine
    /// A poll thread waits on `condition` for started records to finish (revoke, close).
    var drainWaiting = false
    /// The consumer queue, to wake a poll that waits while the bulk buffer is full; nil once
    /// closing (librdkafka wants this reference gone before the consumer closes).
    var consumerQueue: RDKafkaQueue?
    var closeWaiters: [CheckedContinuation<Void, Never>] = []

    // Poll thread only.
    /// Records read or copied from librdkafka and not yet taken into the machine (their ids'
    /// generations are not set yet).
    private var pending: [KafkaRecord] = []
    private var topicNames = RDKafkaTopicNames()
    /// Which failed commits get a warning (`commitFailed`; also from the commit callback).
    var commitFailures = CommitFailureFolding(window: .seconds(10))

    init(
        client: RDKafkaClient,
        configuration: KafkaConsumerConfiguration,
        logger: Logger,
        continuation: AsyncThrowingStream<KafkaConsumerEvent, any Error>.Continuation,
        priorityContinuation: AsyncThrowingStream<KafkaConsumerEvent, any Error>.Continuation,
        onRevoke: (@Sendable (RevokeNotice) -> Void)? = nil,
        reader: (any KafkaRecordReader)? = nil
    ) {
        self.onRevoke = onRevoke
        self.reader = reader
        self.client = client
        self.configuration = configuration
        self.logger = logger
        self.continuation = continuation
        self.priorityContinuation = priorityContinuation
        self.bulkQueue = RDKafkaQueue(client: client)
        self.consumerQueue = RDKafkaQueue(consumerOf: client)
        self.machine = ConsumerStateMachine(settings: ConsumerStateMachine.Settings(configuration), now: .now)
    }

    func start() {
        // Written before Thread.start, read only on the new thread: see RDKafkaCallbacks.
        client.callbacks.rebalanceHandler = self
        client.callbacks.commitHandler = self
        let thread = Thread { [self] in run() }
        thread.name = "kafka-consumer"
        thread.start()
    }

    /// Runs `body` on the machine with `condition` locked.
    @inline(__always)
    func withMachine<Result>(_ body: (inout ConsumerStateMachine) -> Result) -> Result {
        condition.lock()
        defer { condition.unlock() }
        return body(&machine)
    }

    // MARK: - Called from any thread

    func start(_ id: RecordID) -> Bool {
        withMachine { $0.start(id) }
    }

    func start(_ ids: [RecordID]) -> [Bool] {
        withMachine { machine in ids.map { machine.start($0) } }
    }

    func complete(_ id: RecordID, weight: Int) {
        condition.lock()
        machine.complete(id, weight: weight)
        if drainWaiting { condition.broadcast() }
        condition.unlock()
    }

    func complete(_ records: [(id: RecordID, weight: Int)]) {
        guard !records.isEmpty else { return }
        condition.lock()
        for record in records { machine.complete(record.id, weight: record.weight) }
        if drainWaiting { condition.broadcast() }
        condition.unlock()
    }

    func abandon(_ id: RecordID, resumable: (any AnyObject & Sendable)?) {
        condition.lock()
        machine.abandon(id, resumable: resumable)
        if drainWaiting { condition.broadcast() }
        condition.unlock()
    }

    var uncommittedWeight: Int {
        withMachine { $0.assignments.uncommittedWeight }
    }

    var lostWork: LostWorkCounts {
        withMachine { machine in
            let assignments = machine.assignments
            return LostWorkCounts(
                skipped: assignments.lostRecordsSkipped,
                resumed: assignments.lostRecordsResumed,
                forgotten: assignments.lostMemoriesForgotten
            )
        }
    }

    /// The reader took `count` records of a lane.
    func delivered(_ count: Int, priority: Bool) {
        condition.lock()
        if machine.read(count, lane: priority ? .priority : .bulk) {
            // Room again: the poll thread should not sit out its poll timeout.
            consumerQueue?.wake()
        }
        condition.unlock()
    }

    func setUserPaused(_ paused: Bool) {
        withMachine { $0.setUserPaused(paused) }
    }

    var assignment: [TopicPartition] {
        withMachine { $0.assignments.assigned }
    }

    /// This member's id in the group (nil before it joined), and its last rebalance event.
    var membership: KafkaMembership {
        let memberID = client.memberID
        let lastRebalance = withMachine { $0.lastRebalance }
        return KafkaMembership(
            memberID: memberID,
            lastRebalance: lastRebalance?.event,
            sinceLastRebalance: lastRebalance.map { .now - $0.at }
        )
    }

    var inFlightCount: Int {
        withMachine { $0.assignments.inFlight() }
    }

    func requestClose(drainTimeout: Duration) {
        withMachine { $0.requestClose(deadline: .now + drainTimeout) }
    }

    func close(drainTimeout: Duration) async {
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            condition.lock()
            if machine.isClosed {
                condition.unlock()
                waiter.resume()
                return
            }
            closeWaiters.append(waiter)
            machine.requestClose(deadline: .now + drainTimeout)
            condition.unlock()
        }
    }

    // MARK: - Poll thread

    private func run() {
        let pollMilliseconds = Int32(clamping: configuration.pollInterval.milliseconds)
        var bulkTaken: Int?
        while true {
            if let fatal = client.fatalError() {
                if withMachine({ $0.fail(now: .now) }) { continuation.finish(throwing: fatal) }
            }
            let observation = ConsumerStateMachine.Observation(
                now: .now,
                kafkaUnreachable: client.callbacks.failingRecently(within: .seconds(15)),
                assignmentLost: client.assignmentLost,
                bulkTaken: bulkTaken
            )
            switch withMachine({ $0.tick(observation) }) {
            case .close:
                runClose()
                return
            case .poll(let plan):
                perform(plan.actions)
                bulkTaken = nil
                if plan.bulkRoom > 0 {
                    bulkTaken = bulkQueue.consume(
                        upTo: plan.bulkRoom,
                        timeout: plan.bulkWaits ? pollMilliseconds : 0,
                        topicNames: &topicNames,
                        reader: reader,
                        // A partition queue's poll serves no callback: nothing else touches
                        // `pending` meanwhile.
                        into: &pending
                    ) { consumed in take(consumed) }
                }
                pollBatch(timeout: plan.consumerWaits ? pollMilliseconds : 0)
            }
        }
    }

    /// Polls the consumer queue: up to `maxBatchSize` messages (blocking only for the first),
    /// serving rebalances and logs on the way, and hands out what was fetched.
    func pollBatch(timeout: Int32) {
        client.pollConsumer(
            upTo: configuration.maxBatchSize - pending.count,
            timeout: timeout,
            topicNames: &topicNames,
            reader: reader,
            // Not `into: &pending`: the rebalance handler, inside the poll, takes `pending`.
            record: { pending.append($0) },
            other: { take($0) }
        )
        flushPending()
    }

    /// A message that is not a record (records go straight into `pending`).
    private func take(_ consumed: RDKafkaConsumed) {
        switch consumed {
        case .error(let error): logger.warning("consumer: \(error)")
        case .endOfPartition: break
        }
    }

    /// Takes fetched records into the machine and yields them to their lanes' readers. Also
    /// called at the start of every rebalance, so messages fetched under an assignment are taken
    /// under it.
    func flushPending() {
        guard !pending.isEmpty else { return }
        // The bulk lane's records stay in `pending`, which is then handed to the reader as it
        // is: a record's fields are never copied between librdkafka and the pipeline.
        condition.lock()
        let priorityRecords = FetchedBatch.split(&pending) { record in
            guard let (id, lane) = machine.take(record.id.topicPartition, offset: record.id.offset, resumed: &record.resumed)
            else { return nil }
            record.id = id
            return lane
        }
        machine.handedOut(pending.count, lane: .bulk)
        machine.handedOut(priorityRecords.count, lane: .priority)
        condition.unlock()
        var records: [KafkaRecord] = []
        swap(&records, &pending)
        pending.reserveCapacity(records.count)
        if !priorityRecords.isEmpty {
            priorityContinuation.yield(.records(priorityRecords))
        }
        if !records.isEmpty {
            continuation.yield(.records(records))
        }
        client.callbacks.kafkaAnswered()
    }
}

extension Duration {
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
