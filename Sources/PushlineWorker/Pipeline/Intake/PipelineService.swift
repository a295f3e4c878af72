import Logging
import PushlineKafka
import ServiceLifecycle

/// The pipeline as a Service: it takes records from the consumer into `JobPipeline`, waiting at
/// `worker.max_inflight` (`Backpressure`). It is the last service of the group, so graceful
/// shutdown reaches it first: it stops taking records (mid-batch; the rest stay uncommitted),
/// pauses fetching, and waits for the jobs it started (`ShutdownDrain`) before the consumer
/// commits. A fatal consumer error ends it the same way, then it rethrows the error.
final class PipelineService: Service, Sendable {
    private let pipeline: JobPipeline
    private let consumer: KafkaConsumer
    private let backpressure: Backpressure
    private let drain: ShutdownDrain
    private let health: WorkerHealth
    /// A worker with several apps: each app within its share, or parked (nil: one app).
    private let apps: AppsIntake?
    private let logger: Logger
    /// Awaited before the first record is taken (`ControlTopicReader.waitForBoot`: the cancels
    /// already written are in force).
    private let boot: @Sendable () async -> Void

    init(
        pipeline: JobPipeline,
        consumer: KafkaConsumer,
        backpressure: Backpressure,
        drain: ShutdownDrain,
        health: WorkerHealth,
        apps: AppsIntake? = nil,
        logger: Logger,
        boot: @escaping @Sendable () async -> Void = {}
    ) {
        self.boot = boot
        self.pipeline = pipeline
        self.consumer = consumer
        self.backpressure = backpressure
        self.drain = drain
        self.health = health
        self.apps = apps
        self.logger = logger
    }

    func run() async throws {
        var failure: (any Error)?
        do {
            try await cancelWhenGracefulShutdown {
                await self.boot()
                if Task.isCancelled { return }
                try await self.intake()
            }
        } catch {
            logger.error("consumer failed", metadata: ["error": "\(error)"])
            failure = error
        }
        consumer.pause()
        if failure == nil {
            logger.info(
                "shutting down: no new jobs; finishing in-flight work",
                metadata: [
                    "timeout_ms": "\(Int(drain.timeout / .milliseconds(1)))"
                ]
            )
        }
        let ending = await drain.run()
        let unfinished = pipeline.gate.jobs.value
        if unfinished > 0 {
            logger.warning(
                "shutdown timeout: jobs left unfinished will be redone by the group",
                metadata: [
                    "unfinished_jobs": "\(unfinished)", "ending": "\(ending)",
                ]
            )
        }
        if let failure { throw failure }
    }

    /// Hands records to the pipeline until cancelled (graceful shutdown) or the consumer's events
    /// end; throws the consumer's fatal error. The urgent lane has an intake of its own, so its
    /// records never wait behind bulk ones nor for bulk work to leave the gate.
    private func intake() async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await self.urgentIntake() }
            // The bulk intake ends the run (events over, cancelled, or the consumer's error).
            defer { group.cancelAll() }
            try await bulkIntake()
        }
    }

    private func bulkIntake() async throws {
        // The records of one run, decoded: one buffer, reused by every run.
        var run: [DecodedRecord] = []
        for try await event in consumer.events {
            switch event {
            case .records(let records):
                if let apps {
                    guard await apps.take(records, pipeline: pipeline, consumer: consumer, logger: logger) else { return }
                    continue
                }
                var next = records.startIndex
                while next < records.endIndex {
                    guard await backpressure.admit(), !Task.isCancelled else { return }
                    // A run of records the gate has room for (the last may take it past its
                    // limit, as one job always could): decoded first, started under one lock,
                    // and handed to the pipeline together.
                    var length = IntakeRun(room: pipeline.gate.limit - pipeline.gate.count)
                    while next < records.endIndex && length.wantsMore {
                        let decoded = pipeline.decode(records[next])
                        length.add(weight: decoded.weight)
                        run.append(decoded)
                        next += 1
                    }
                    // Revoked while it waited: its partition's next owner does it.
                    let started = consumer.start(run.map { $0.record.id })
                    pipeline.handle(run, started: started)
                    // Emptied at once: held records would keep their bytes alive meanwhile.
                    run.removeAll(keepingCapacity: true)
                }
            case .assigned(let partitions):
                health.groupJoined()
                logger.info("partitions assigned", metadata: ["partitions": "\(partitions)"])
            case .revoked(let partitions):
                logger.info("partitions revoked", metadata: ["partitions": "\(partitions)"])
            }
        }
    }

    /// Ends with the consumer's priority stream (which ends without an error: a fatal one comes
    /// through `events`) or when cancelled.
    private func urgentIntake() async {
        do {
            for try await event in consumer.priorityRecords {
                guard case .records(let records) = event else { continue }
                for record in records {
                    guard await pipeline.gate.waitForUrgentRoom(), !Task.isCancelled else { return }
                    let decoded = pipeline.decode(record)
                    let started = consumer.start([record.id])
                    if let apps, apps.parksUrgent(decoded, cancellations: pipeline.cancellations) {
                        // A held app's urgent job waits in the deferred topic, not in the urgent
                        // window, and comes back first when the hold ends.
                        pipeline.results.release.park([decoded], started: started, lane: .urgent) { _ in 0 }
                        continue
                    }
                    pipeline.handle([decoded], started: started, lane: .urgent)
                }
            }
        } catch {}
    }
}
