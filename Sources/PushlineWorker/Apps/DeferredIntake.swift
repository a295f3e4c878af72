import Logging
import PushlineAPNS
import PushlineAPNSCore
import PushlineKafka
import ServiceLifecycle
import Synchronization

/// Brings parked jobs back: the deferred topic's consumer (a group of its own,
/// `<group_id>.deferred`: its partitions are assigned, revoked and committed like the jobs
/// topic's) reads them, this intake holds them by app (`DeferredQueue`) and hands an app's to the
/// pipeline, in the order they were parked and its urgent ones first, as soon as the app is not
/// held, its not-before time has come and it has room in its share (`AppWindow`). A job brought
/// back keeps its identity: its results name its first source (`ParkedRecordHeaders`), and its
/// deferred record is completed, like any job's, once they are all in Kafka.
///
/// Memory is bounded: at `maxHeld` jobs held, the deferred consumer pauses until half are gone.
/// What is held is not started, so a revoke or a shutdown leaves it to the partition's next owner.
///
/// Nothing is polled: after each turn the intake waits (`DeferredWake`) for a job read back, a
/// hold's change, a raised window, an app's room, or the first time the clock alone makes a held
/// job ready, whichever comes first.
final class DeferredIntake: Service, Sendable {
    private let consumer: KafkaConsumer
    private let pipeline: JobPipeline
    private let window: AppWindow
    private let metrics: [String: AppWindowMetrics]
    private let logger: Logger
    private let maxHeld: Int
    private let queue = Mutex(DeferredQueue())
    /// Signalled when a job is read back (`take`).
    private let arrivals = ChangeSignal()
    private let paused = Atomic<Bool>(false)

    init(
        consumer: KafkaConsumer,
        pipeline: JobPipeline,
        window: AppWindow,
        metrics: [String: AppWindowMetrics],
        logger: Logger,
        maxHeld: Int = 2000
    ) {
        self.consumer = consumer
        self.pipeline = pipeline
        self.window = window
        self.metrics = metrics
        self.logger = logger
        self.maxHeld = maxHeld
        pipeline.cancellations.onCancel { [weak self] in self?.releaseCancelled() }
    }

    /// Parked jobs held for `app` now.
    func held(_ app: String) -> Int { queue.withLock { $0.count(of: app) } }

    func run() async throws {
        await cancelWhenGracefulShutdown {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await self.read() }
                group.addTask { await self.releaseLoop() }
                // Either ends the intake: the consumer's events end, or the task is cancelled.
                await group.next()
                group.cancelAll()
            }
        }
    }

    private func read() async {
        do {
            for try await event in consumer.events {
                switch event {
                case .records(let records):
                    for record in records { take(record) }
                case .assigned(let partitions):
                    logger.info("deferred partitions assigned", metadata: ["partitions": "\(partitions)"])
                case .revoked(let partitions):
                    let dropped = queue.withLock { $0.drop(partitions: Set(partitions)) }
                    logger.info(
                        "deferred partitions revoked",
                        metadata: ["partitions": "\(partitions)", "parked_jobs_left_to_next_owner": "\(dropped)"]
                    )
                }
            }
        } catch {
            logger.error("deferred-topic consumer failed", metadata: ["error": "\(error)"])
        }
    }

    /// A parked job read back: held by app, or, when it is no job (not written by a worker),
    /// handed to the pipeline at once to be rejected with its dead-letter copy.
    private func take(_ record: KafkaRecord) {
        var decoded = pipeline.decode(record)
        guard case .success(let job) = decoded.job else {
            pipeline.handle([decoded], started: consumer.start([record.id]))
            return
        }
        let headers = ParkedRecordHeaders(record.headers)
        decoded.source = headers?.source
        // Read before the check: a cancel applied between the check and the append below has
        // swept the queue before the job was in it, and is seen moved then (swept again).
        let cancelEpoch = pipeline.cancellations.epoch
        if pipeline.cancellations.isCancelled(job) {
            // Cancelled while parked: finalised now (no room needed), under its first source.
            pipeline.handle([decoded], started: consumer.start([record.id]), lane: headers?.lane ?? .bulk)
            return
        }
        let entry = DeferredQueue.Entry(
            record: decoded,
            app: job.app,
            lane: headers?.lane ?? .bulk,
            notBefore: headers?.notBefore ?? 0,
            weight: job.recipientCount
        )
        let held = queue.withLock { queue in
            queue.append(entry)
            return queue.count
        }
        if held >= maxHeld, !paused.exchange(true, ordering: .relaxed) {
            consumer.pause()
        }
        if pipeline.cancellations.epoch != cancelEpoch { releaseCancelled() }
        arrivals.signal()
    }

    private func releaseLoop() async {
        while !Task.isCancelled {
            // Read before the turn: a change during it wakes the wait at once.
            let seen = (arrivals.generation, window.holdChanged.generation, window.gate.limitRaised.generation)
            let wake = releaseReady()
            for (app, metrics) in metrics { metrics.parkedJobs.record(held(app)) }
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await self.arrivals.wait(after: seen.0, until: wake.deadline) }
                group.addTask { await self.window.holdChanged.wait(after: seen.1) }
                group.addTask { await self.window.gate.limitRaised.wait(after: seen.2) }
                for (load, atMost) in wake.rooms {
                    group.addTask { _ = await load.inflight.wait(atMost: atMost) }
                }
                await group.next()
                group.cancelAll()
            }
        }
    }

    /// Hands the held jobs a cancel names to the pipeline at once, which finalises them as
    /// cancelled (after each cancel: `Cancellations.onCancel`).
    func releaseCancelled() {
        let cancellations = pipeline.cancellations
        let entries = queue.withLock { queue in
            queue.take { entry in
                guard case .success(let job) = entry.record.job else { return false }
                return cancellations.isCancelled(job)
            }
        }
        guard !entries.isEmpty else { return }
        hand(entries)
    }

    /// Hands `entries` to the pipeline, by lane, started at the consumer.
    private func hand(_ entries: [DeferredQueue.Entry]) {
        for lane in SendLane.allCases {
            let records = entries.filter { $0.lane == lane }.map(\.record)
            guard !records.isEmpty else { continue }
            pipeline.handle(records, started: consumer.start(records.map(\.record.id)), lane: lane)
        }
    }

    /// Hands each app's ready jobs to the pipeline, within its room; returns what the jobs still
    /// held wait for.
    @discardableResult
    func releaseReady() -> DeferredWake {
        let now = MonotonicInstant.now
        let wall = pipeline.results.wallClockMilliseconds()
        var wake = DeferredWake()
        for app in queue.withLock({ $0.appsWaiting }) {
            guard let load = window.load(of: app) else { continue }
            // Within its room (a held app's: its probe, when it has nothing in flight).
            let admission = window.state(of: load, at: now)
            let (entries, due, ready) = queue.withLock { queue in
                let taken = queue.take(app: app, room: admission.room, now: wall)
                return (taken, queue.nextDue(app: app, after: wall), queue.hasReady(app: app, now: wall))
            }
            if let due { wake.wake(at: now.advanced(by: .milliseconds(due - wall))) }
            if ready { wake.wake(when: load, isAtMost: DeferredWake.roomThreshold(admission)) }
            guard !entries.isEmpty else { continue }
            metrics[app]?.unparked.increment(by: entries.count)
            hand(entries)
        }
        if let growth = window.nextShareGrowth(after: now) { wake.wake(at: growth) }
        if paused.load(ordering: .relaxed), queue.withLock({ $0.count }) < maxHeld / 2 {
            paused.store(false, ordering: .relaxed)
            consumer.resume()
        }
        return wake
    }
}
