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
/// Memory is bounded: at `maxHeld` jobs held, the deferred consumer pauses until half are gone;
/// while it is paused, held apps' jobs go back to the topic (`reparkHeld`), so that they never
/// stop the other apps' parked jobs behind them.
/// What is held is not started, so a revoke or a shutdown leaves it to the partition's next owner.
final class DeferredIntake: Service, Sendable {
    private let consumer: KafkaConsumer
    private let pipeline: JobPipeline
    private let window: AppWindow
    private let metrics: [String: AppWindowMetrics]
    private let logger: Logger
    private let maxHeld: Int
    private let interval: Duration
    private let queue = Mutex(DeferredQueue())
    private let paused = Atomic<Bool>(false)
    /// When held apps' jobs last went back to the deferred topic (`reparkHeld`).
    private let lastRepark = Mutex<MonotonicInstant?>(nil)
    /// Awaited before the first job is released (`ControlTopicReader.waitForBoot`).
    private let boot: @Sendable () async -> Void

    init(
        consumer: KafkaConsumer,
        pipeline: JobPipeline,
        window: AppWindow,
        metrics: [String: AppWindowMetrics],
        logger: Logger,
        maxHeld: Int = 2000,
        interval: Duration = .milliseconds(20),
        boot: @escaping @Sendable () async -> Void = {}
    ) {
        self.boot = boot
        self.consumer = consumer
        self.pipeline = pipeline
        self.window = window
        self.metrics = metrics
        self.logger = logger
        self.maxHeld = maxHeld
        self.interval = interval
        pipeline.cancellations.onCancel { [weak self] in self?.releaseCancelled() }
    }

    /// Parked jobs held for `app` now.
    func held(_ app: String) -> Int { queue.withLock { $0.count(of: app) } }

    func run() async throws {
        await cancelWhenGracefulShutdown {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await self.read() }
                group.addTask {
                    await self.boot()
                    await self.releaseLoop()
                }
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
    }

    private func releaseLoop() async {
        var turns = 0
        while !Task.isCancelled {
            releaseReady()
            turns += 1
            if turns % 16 == 0 {
                for (app, metrics) in metrics { metrics.parkedJobs.record(held(app)) }
            }
            try? await Task.sleep(for: interval)
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

    /// Hands each app's ready jobs to the pipeline, within its room.
    func releaseReady() {
        let now = MonotonicInstant.now
        let wall = pipeline.results.wallClockMilliseconds()
        for app in queue.withLock({ $0.appsWaiting }) {
            guard let load = window.load(of: app) else { continue }
            // Within its room (a held app's: its probe, when it has nothing in flight).
            let room = window.state(of: load, at: now).room
            let entries = queue.withLock { $0.take(app: app, room: room, now: wall) }
            guard !entries.isEmpty else { continue }
            metrics[app]?.unparked.increment(by: entries.count)
            hand(entries)
        }
        guard paused.load(ordering: .relaxed) else { return }
        if queue.withLock({ $0.count }) < maxHeld / 2 {
            paused.store(false, ordering: .relaxed)
            consumer.resume()
        } else {
            reparkHeld(at: now)
        }
    }

    /// The queue is full and the deferred consumer paused: the jobs of held apps, which cannot
    /// leave it before their hold ends, go back to the deferred topic (a copy each, their records
    /// completed once the copies are in Kafka), so that the other apps' parked jobs behind them on
    /// the same partitions are read. Without this, a held app with more than half of `maxHeld`
    /// jobs parked stopped every other app's parked jobs until its hold ended (CI: the healthy app
    /// of `AppIsolationTests`, parked as slow at its share, waited for a 90 s refusal of the
    /// other). The copies are read again after the others', and wait again while the app is held.
    /// At most once a second.
    private func reparkHeld(at now: MonotonicInstant) {
        guard
            lastRepark.withLock({ last in
                guard last.map({ now.nanoseconds - $0.nanoseconds >= 1_000_000_000 }) ?? true else { return false }
                last = now
                return true
            })
        else { return }
        let held = Set(window.all.filter(\.isHeld).map(\.name))
        guard !held.isEmpty else { return }
        let entries = queue.withLock { $0.take { held.contains($0.app) } }
        guard !entries.isEmpty else { return }
        for lane in SendLane.allCases {
            let records = entries.filter { $0.lane == lane }.map(\.record)
            guard !records.isEmpty else { continue }
            pipeline.results.release.park(records, started: consumer.start(records.map(\.record.id)), lane: lane) { _ in 0 }
        }
        logger.info(
            "held apps' parked jobs go back to the deferred topic: the other apps' parked jobs are behind them",
            metadata: ["jobs": "\(entries.count)", "apps": "\(held.sorted().joined(separator: ","))"]
        )
    }
}
