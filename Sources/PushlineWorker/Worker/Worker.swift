import PushlineAPNS
import PushlineKafka
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import Synchronization

/// `pushline run`: consumes jobs, sends them to APNs, publishes results, completes offsets.
///
/// A swift-service-lifecycle `Service`: on graceful shutdown it stops fetching, lets in-flight work
/// finish within `worker.shutdown_timeout_ms`, flushes results, commits what completed and leaves
/// the group. Work not finished in time is not committed, so another member redoes it.
public final class Worker: Service, Sendable {
    public let configuration: PushlineConfiguration
    private let logger: Logger
    let health: WorkerHealth

    public init(configuration: PushlineConfiguration, logger: Logger, health: WorkerHealth = WorkerHealth()) {
        self.configuration = configuration
        self.logger = logger
        self.health = health
    }

    public func run() async throws {
        let configuration = self.configuration
        let logger = self.logger
        let metrics = WorkerMetrics()
        let kafka = configuration.kafka
        let shutdownTimeout = Duration.milliseconds(configuration.worker.shutdownTimeoutMilliseconds)

        let group = MultiThreadedEventLoopGroup(numberOfThreads: System.coreCount)
        let clients = try APNSClients.make(configuration, group: group)
        for (name, client) in clients {
            logger.info("APNs pool starting", metadata: [
                "app": "\(name)", "endpoint": "\(client.configuration.endpoint)",
                "connections": "\(client.configuration.connections)",
            ])
            client.start()
        }
        health.register(clients: clients)

        let lag = ConsumerLagReporter()
        let producer = try KafkaProducer(
            configuration: KafkaProducerConfiguration(
                bootstrapServers: kafka.brokers, properties: Self.producerProperties(kafka.properties)),
            logger: logger)
        let consumer = try KafkaConsumer(
            configuration: KafkaConsumerConfiguration(
                bootstrapServers: kafka.brokers, groupID: kafka.groupID, topics: [kafka.jobsTopic],
                properties: kafka.properties, statisticsInterval: .seconds(5),
                revokeDrainTimeout: min(shutdownTimeout, .seconds(20)), maxBatchSize: 500,
                maxBufferedRecords: 2000),
            logger: logger,
            onStatistics: { json in lag.update(json) })
        logger.info("Kafka consumer subscribed", metadata: [
            "brokers": "\(kafka.brokers)", "group": "\(kafka.groupID)", "topic": "\(kafka.jobsTopic)",
        ])

        let gate = InflightGate(limit: configuration.worker.maxInflight)
        let publisher = ResultPublisher(producer: producer, logger: logger, metrics: metrics)
        let pipeline = JobPipeline(
            decoder: JobDecoder(
                bundleIDs: configuration.apps.mapValues(\.bundleID), maxRecordBytes: configuration.worker.maxJobBytes),
            clients: clients,
            publisher: publisher,
            topics: .init(
                results: kafka.resultsTopic,
                invalidations: kafka.invalidationsTopic.isEmpty ? nil : kafka.invalidationsTopic,
                deadLetter: kafka.deadLetterTopic),
            invalidateOn: configuration.worker.invalidateOn,
            gate: gate,
            metrics: metrics,
            logger: logger,
            complete: { consumer.complete($0) })

        // Gauges sampled four times a second: in flight, producer queue, the pools' connections.
        let sampler = Task {
            while !Task.isCancelled {
                metrics.inflight.record(gate.count)
                metrics.producerQueueDepth.record(publisher.queueDepth)
                for (name, client) in clients {
                    metrics.observe(app: name, status: client.status())
                }
                try? await Task.sleep(for: .milliseconds(250))
            }
        }
        defer { sampler.cancel() }

        // Shutdown: stop taking jobs, let the ones started finish (bounded), then close the
        // consumer at once: it stores and commits the completed prefix and leaves the group.
        // Records fetched but never started stay uncommitted and go to the next owner.
        let stopping = Atomic<Bool>(false)
        let closing = Mutex<Task<Void, Never>?>(nil)
        let startClose = { @Sendable in
            stopping.store(true, ordering: .releasing)
            gate.close()
            closing.withLock { task in
                guard task == nil else { return }
                task = Task {
                    let deadline = ContinuousClock.now + shutdownTimeout
                    // Work of a held app will not finish soon: waiting for it only delays the
                    // handover, so the wait ends once everything still pending is held.
                    func onlyHeldWorkLeft() -> Bool {
                        let statuses = clients.values.map { $0.status() }
                        return statuses.contains { $0.hold != nil } && statuses.allSatisfy { $0.hold != nil || $0.isIdle }
                    }
                    while pipeline.activeJobs > 0 && ContinuousClock.now < deadline && !onlyHeldWorkLeft() {
                        try? await Task.sleep(for: .milliseconds(20))
                    }
                    let unfinished = pipeline.activeJobs
                    if unfinished > 0 {
                        logger.warning("shutdown timeout: jobs left unfinished will be redone by the group", metadata: [
                            "unfinished_jobs": "\(unfinished)"
                        ])
                    }
                    await consumer.close(drainTimeout: .zero)
                }
            }
        }

        do {
            try await withGracefulShutdownHandler {
                events: for try await event in consumer.events {
                    switch event {
                    case .records(let records):
                        for record in records {
                            // Above worker.max_inflight: wait. A short wait is enough when APNs
                            // is merely busy; if it lasts, pause the partitions (the poll thread
                            // keeps the member in the group) until the low-water mark. Pausing
                            // drops librdkafka's prefetched records, so it is not done lightly.
                            if gate.isFull, !(await gate.waitForRoom(timeout: .milliseconds(500))) {
                                consumer.pause()
                                metrics.pausedPartitions.record(consumer.assignment.count)
                                await gate.waitForRoom()
                                consumer.resume()
                                metrics.pausedPartitions.record(0)
                            }
                            if stopping.load(ordering: .acquiring) { break events }
                            pipeline.handle(record)
                        }
                    case .assigned(let partitions):
                        health.groupJoined()
                        logger.info("partitions assigned", metadata: ["partitions": "\(partitions)"])
                    case .revoked(let partitions):
                        logger.info("partitions revoked", metadata: ["partitions": "\(partitions)"])
                    }
                }
            } onGracefulShutdown: {
                logger.info("shutting down: no new jobs; finishing in-flight work", metadata: [
                    "timeout_ms": "\(configuration.worker.shutdownTimeoutMilliseconds)"
                ])
                startClose()
            }
        } catch {
            logger.error("consumer failed", metadata: ["error": "\(error)"])
            startClose()
            await closing.withLock { $0 }?.value
            await shutdown(producer: producer, clients: clients, group: group)
            throw error
        }
        startClose()
        await closing.withLock { $0 }?.value
        logger.info("consumer closed; offsets of finished work committed", metadata: ["in_flight_left": "\(gate.count)"])
        await shutdown(producer: producer, clients: clients, group: group)
    }

    private func shutdown(producer: KafkaProducer, clients: [String: APNSClient], group: MultiThreadedEventLoopGroup) async {
        // APNs first: outcomes that arrive while the pools close still reach the producer, which
        // then flushes them.
        for client in clients.values {
            await client.shutdown()
        }
        await producer.close(timeout: .seconds(5))
        try? await group.shutdownGracefully()
    }

    /// Consumer-only settings are dropped from the producer's copy of `kafka.properties` (librdkafka
    /// warns about them); security settings apply to both.
    public static func producerProperties(_ properties: [String: String]) -> [String: String] {
        let consumerOnly: Set<String> = [
            "session.timeout.ms", "heartbeat.interval.ms", "max.poll.interval.ms", "auto.offset.reset",
            "group.instance.id", "fetch.min.bytes", "fetch.wait.max.ms", "fetch.max.bytes",
            "max.partition.fetch.bytes", "auto.commit.interval.ms", "partition.assignment.strategy",
            "group.protocol", "queued.min.messages", "queued.max.messages.kbytes", "isolation.level",
        ]
        return properties.filter { !consumerOnly.contains($0.key) }
    }
}
