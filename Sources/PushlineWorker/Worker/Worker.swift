import Logging
import PushlineKafka
import ServiceLifecycle

/// `pushline run`: consumes jobs, sends them to APNs, publishes results, completes offsets.
///
/// `Worker` only wires: `services()` builds the parts and returns them as swift-service-lifecycle
/// services in dependency order, for one `ServiceGroup` (which shuts them down in reverse order;
/// docs/architecture.md, "Lifecycle"). On graceful shutdown the pipeline stops taking records and
/// lets in-flight work finish within `worker.shutdown_timeout_ms`, the consumer commits what
/// completed and leaves the group, the APNs pools close, and the producer flushes. Work not
/// finished in time is not committed, so another member redoes it.
public struct Worker: Sendable {
    public let configuration: PushlineConfiguration
    private let logger: Logger
    let health: WorkerHealth

    public init(configuration: PushlineConfiguration, logger: Logger, health: WorkerHealth = WorkerHealth()) {
        self.configuration = configuration
        self.logger = logger
        self.health = health
    }

    /// The worker's services, each after the ones it depends on: control topic reader, producer,
    /// APNs pools, gauge sampler, window controller, consumer (with several apps, the deferred
    /// topic's consumer), pipeline (with several apps, the deferred intake): docs/architecture.md's
    /// lifecycle table, which `ArchitectureDocTests` holds to the `return` below. Throws
    /// `ConfigurationProblems` for an app that cannot be set up and `KafkaError` for a client
    /// librdkafka refuses.
    public func services() throws -> [ServiceGroupConfiguration.ServiceConfiguration] {
        let (configuration, logger) = (self.configuration, self.logger)
        let kafka = configuration.kafka
        let shutdownTimeout = Duration.milliseconds(configuration.worker.shutdownTimeoutMilliseconds)
        let metrics = WorkerMetrics()

        let producer = try KafkaProducer(
            configuration: KafkaProducerConfiguration(
                bootstrapServers: kafka.brokers,
                properties: Self.producerProperties(kafka.properties)
            ),
            logger: logger
        )
        let publisher = ResultPublisher(producer: producer, logger: logger, metrics: metrics)
        // Each run of APNs outcomes publishes its result records as one batch.
        let pools = try APNSPools(configuration: configuration, health: health, logger: logger, outcomeScope: publisher)
        // The group watchdog's bound: three session timeouts (librdkafka's default is 45 s).
        let sessionTimeout = Duration.milliseconds(Int(kafka.properties["session.timeout.ms"] ?? "") ?? 45_000)
        let group = GroupMonitor(bound: sessionTimeout * 3, logger: logger)
        health.register(group: group)
        let revokeDrainTimeout = min(shutdownTimeout, .seconds(20))
        let decoder = JobDecoder(
            bundleIDs: configuration.apps.mapValues(\.bundleID),
            maxRecordBytes: configuration.worker.maxJobBytes,
            collapseDuplicates: configuration.worker.collapseDuplicates,
            dryRun: configuration.worker.dryRun
        )
        if configuration.worker.dryRun {
            logger.warning(
                "worker.dry_run is on: nothing will be sent to APNs; every job's tokens end with status 0, reason dry_run",
                metadata: ["topic": "\(kafka.jobsTopic)", "group": "\(kafka.groupID)"]
            )
        }
        // Several apps share the window by app, and a job of an app that cannot take it parks on
        // the deferred topic (docs/kafka.md, "Apps kept apart"); one app has the window alone.
        let severalApps = configuration.apps.count > 1
        let jobsConsumer = KafkaConsumerConfiguration(
            bootstrapServers: kafka.brokers,
            groupID: kafka.groupID,
            topics: kafka.consumedTopics,
            priorityTopics: kafka.urgentJobsTopic.isEmpty ? [] : [kafka.urgentJobsTopic],
            properties: kafka.properties,
            statisticsInterval: .seconds(5),
            revokeDrainTimeout: revokeDrainTimeout,
            maxBatchSize: 500,
            maxBufferedRecords: 2000,
            // Only for brokers that need them (kafka.guard_join_rounds; docs/kafka.md, "Broker
            // guards"). A rebalance round completes within about a session timeout; a member that
            // leaves in the middle of one stalls the embedded broker's group.
            closeJoinWait: kafka.guardJoinRounds ? min(sessionTimeout + .seconds(5), .seconds(30)) : .zero,
            // A round waits at most for every member's revoke drain, or a dead member's
            // session timeout; a join pending longer than both, twice over for the latter, is
            // not going to be answered (docs/kafka.md, "A join that is never answered").
            stalledJoinLimit: kafka.guardJoinRounds ? sessionTimeout * 2 + revokeDrainTimeout : .zero
        )
        // Every cancel already on the control topic is applied before the intakes start a job, so
        // it holds for jobs that arrive from the start (bounded: a topic not read in 10 s applies
        // late). The wait is the reader's service's (a SIGTERM during it stops the worker as at any
        // other time). What is cancelled: the control topic's reader applies to it, the pipeline
        // asks it.
        let cancellations = Cancellations(logger: logger)
        let control = try ControlTopicReader(
            kafka: kafka,
            retentionMilliseconds: configuration.worker.cancelRetentionMilliseconds,
            logger: logger,
            apply: { cancellations.apply($0) }
        )
        let consumer = try KafkaConsumer(
            configuration: jobsConsumer,
            logger: logger,
            onStatistics: { json in group.update(json) },
            onRevoke: { notice in pools.withdraw(notice) },
            // Jobs are decoded on the poll thread, in librdkafka's buffer: only a record that
            // will be rejected is copied (its dead-letter copy needs its bytes and headers), and,
            // with several apps, every job's value (a parked copy needs it).
            reader: JobRecordReader(decoder: decoder, keepsBytes: severalApps)
        )
        // The deferred topic's consumer: the jobs consumer's settings, in a group of its own, with
        // no urgent lane nor statistics; its generations far from the jobs consumer's, so that its
        // revokes withdraw its own jobs' requests only.
        var deferredConsumer = jobsConsumer
        deferredConsumer.groupID = kafka.groupID + ".deferred"
        deferredConsumer.topics = [kafka.deferredTopicName]
        deferredConsumer.priorityTopics = []
        deferredConsumer.statisticsInterval = nil
        deferredConsumer.firstGeneration = 1 << 40
        let deferred: KafkaConsumer? =
            severalApps
            ? try KafkaConsumer(configuration: deferredConsumer, logger: logger, onRevoke: { notice in pools.withdraw(notice) }) : nil
        let deferredTopic = kafka.deferredTopicName
        // A job's record is completed (or abandoned) at the consumer that read it.
        let owner: @Sendable (RecordID) -> KafkaConsumer = { id in
            if let deferred, id.topic == deferredTopic { return deferred }
            return consumer
        }
        logger.info(
            "Kafka consumer subscribed",
            metadata: [
                "brokers": "\(kafka.brokers)", "group": "\(kafka.groupID)", "topic": "\(kafka.jobsTopic)",
                "urgent_topic": "\(kafka.urgentJobsTopic.isEmpty ? "-" : kafka.urgentJobsTopic)",
            ]
        )

        group.attach(
            .init(
                owned: { consumer.assignment.count },
                membership: { consumer.membership },
                held: { pools.clients.values.contains { $0.status().hold != nil } },
                kafkaUnreachable: { consumer.kafkaUnreachable }
            )
        )

        let gate = InflightGate(limit: configuration.worker.maxInflight)
        let appWindow = severalApps ? AppWindow(apps: configuration.apps.mapValues(\.maxRate), gate: gate) : nil
        if let appWindow {
            for (name, client) in pools.clients {
                client.onHoldChange { held in appWindow.setHeld(held, app: name) }
            }
        }
        let windowMetrics = Dictionary(uniqueKeysWithValues: configuration.apps.keys.map { ($0, AppWindowMetrics(app: $0)) })
        let parker =
            severalApps ? JobParker(publisher: publisher, topic: try producer.topic(deferredTopic), metrics: windowMetrics) : nil
        let pipeline = JobPipeline(
            decoder: decoder,
            clients: pools.clients,
            publisher: publisher,
            topics: .init(
                results: try producer.topic(kafka.resultsTopic),
                invalidations: kafka.invalidationsTopic.isEmpty ? nil : try producer.topic(kafka.invalidationsTopic),
                deadLetter: try producer.topic(kafka.deadLetterTopic)
            ),
            invalidateOn: configuration.worker.invalidateOn,
            results: ResultsMode(rawValue: configuration.worker.results) ?? .full,
            gate: gate,
            window: appWindow,
            metrics: metrics,
            logger: logger,
            complete: { owner($0).complete($0, weight: $1) },
            // A group's records (the only ones completed together) come from one consumer.
            completeAll: { records in records.first.map { owner($0.id).complete(contentsOf: records) } },
            abandon: { owner($0).abandon($0, resumable: $1) },
            parker: parker,
            cancellations: cancellations
        )
        let apps = appWindow.map { window in
            AppsIntake(window: window, deferredTopic: deferredTopic, metrics: windowMetrics)
        }
        let sampler = GaugeSampler(
            metrics: metrics,
            gate: gate,
            publisher: publisher,
            clients: pools.clients,
            uncommitted: { gate.count + consumer.uncommittedWeight },
            assigned: { consumer.assignment.count },
            lostWork: { consumer.lostWork },
            apps: appWindow.map { ($0, windowMetrics) }
        )
        let window = WindowController(
            target: configuration.worker.maxQueueMilliseconds > 0 ? .milliseconds(configuration.worker.maxQueueMilliseconds) : nil,
            gate: gate,
            clients: pools.clients,
            meter: pipeline.queueDelays,
            metrics: metrics
        )
        let backpressure = Backpressure(
            gate: gate,
            pause: {
                consumer.pause()
                let urgent = kafka.urgentJobsTopic
                metrics.pausedPartitions.record(consumer.assignment.filter { $0.topic != urgent }.count)
            },
            resume: {
                consumer.resume()
                metrics.pausedPartitions.record(0)
            }
        )
        let drain = ShutdownDrain(
            activeJobs: gate.jobs,
            timeout: shutdownTimeout,
            onlyHeldWorkLeft: { pools.onlyHeldWorkLeft() },
            holdChanged: pools.holdChanged
        )

        let parked = deferredServices(
            deferred,
            pipeline: pipeline,
            window: appWindow,
            metrics: windowMetrics,
            gate: gate,
            control: control
        )
        return [
            // First, so it stops last: cancels keep applying through the drain.
            .init(service: control),
            .init(service: publisher),
            .init(service: pools),
            .init(service: sampler),
            .init(service: window),
            .init(service: JobConsumer(consumer: consumer, gate: gate, logger: logger)),
        ] + parked.consumer + [
            // A fatal consumer error (or events that end by themselves) shuts the rest down in
            // order, so what completed is still committed and results are flushed.
            .init(
                service: PipelineService(
                    pipeline: pipeline,
                    consumer: consumer,
                    backpressure: backpressure,
                    drain: drain,
                    health: health,
                    apps: apps,
                    logger: logger,
                    boot: { await control.waitForBoot() }
                ),
                successTerminationBehavior: .gracefullyShutdownGroup,
                failureTerminationBehavior: .gracefullyShutdownGroup
            )
        ] + parked.intake
    }

    /// With several apps, the deferred topic's consumer (before the pipeline's service: it closes
    /// and commits after the drain, like the jobs consumer) and the intake that brings parked jobs
    /// back (after it: on graceful shutdown it stops bringing jobs back before the drain).
    private func deferredServices(
        _ deferred: KafkaConsumer?,
        pipeline: JobPipeline,
        window: AppWindow?,
        metrics: [String: AppWindowMetrics],
        gate: InflightGate,
        control: ControlTopicReader
    ) -> (consumer: [ServiceGroupConfiguration.ServiceConfiguration], intake: [ServiceGroupConfiguration.ServiceConfiguration]) {
        guard let deferred, let window else { return ([], []) }
        return (
            [.init(service: JobConsumer(consumer: deferred, gate: gate, logger: logger))],
            [
                .init(
                    service: DeferredIntake(
                        consumer: deferred,
                        pipeline: pipeline,
                        window: window,
                        metrics: metrics,
                        logger: logger,
                        boot: { await control.waitForBoot() }
                    ),
                    successTerminationBehavior: .gracefullyShutdownGroup,
                    failureTerminationBehavior: .gracefullyShutdownGroup
                )
            ]
        )
    }

    /// Consumer-only settings are dropped from the producer's copy of `kafka.properties` (librdkafka
    /// warns about them); security settings apply to both.
    public static func producerProperties(_ properties: [String: String]) -> [String: String] {
        let consumerOnly: Set<String> = [
            "session.timeout.ms", "heartbeat.interval.ms", "max.poll.interval.ms", "auto.offset.reset",
            "group.instance.id", "fetch.min.bytes", "fetch.wait.max.ms", "fetch.max.bytes",
            "max.partition.fetch.bytes", "auto.commit.interval.ms", "partition.assignment.strategy",
            "group.protocol", "group.remote.assignor", "queued.min.messages", "queued.max.messages.kbytes", "isolation.level",
        ]
        return properties.filter { !consumerOnly.contains($0.key) }
    }
}
