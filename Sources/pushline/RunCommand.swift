import ArgumentParser
import Foundation
import Logging
import Metrics
import PushlineAPNSCore
import PushlineWorker
import ServiceLifecycle

struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "The worker: consume jobs, send to APNs, publish results, commit offsets.",
        discussion: """
            Every configuration key can be overridden from the environment: upper case, dots and \
            underscores as '_' (kafka.brokers -> KAFKA_BROKERS). SIGTERM or SIGINT drains in-flight \
            work for up to worker.shutdown_timeout_ms, commits what finished and exits 0.
            """
    )

    @Option(name: .long, help: "The YAML configuration file (see docs/configuration.md).")
    var config: String?

    @Flag(name: .long, help: "Print the effective configuration (secrets redacted) and exit.")
    var printConfig = false

    func run() async throws {
        // SIGTERM and SIGINT from the first instruction: one that comes while the configuration
        // loads or the services are made is kept, and shuts the group down gracefully as soon as
        // it runs (exit 0), instead of killing the process.
        let signals = SignalWaiter(signals: [SIGTERM, SIGINT])
        defer { withExtendedLifetime(signals) {} }
        let configuration = try await loadConfiguration(file: config, kafkaOnly: false)
        if printConfig {
            print(configuration.renderedYAML(), terminator: "")
            return
        }
        PushlineLogging.bootstrap(level: configuration.log.level, format: configuration.log.format)
        let logger = Logger(label: "pushline.worker")
        logger.info("memory allocator", metadata: ["allocator": "\(Allocator.description ?? "glibc malloc (jemalloc not linked)")"])
        let metrics = PushlineMetricsFactory()
        MetricsSystem.bootstrap(metrics)

        let health = WorkerHealth()
        do {
            // One group, in dependency order: the metrics server first (it stops last and answers
            // throughout the drain), then the worker's services (Worker.services()).
            var services: [ServiceGroupConfiguration.ServiceConfiguration] = []
            if let address = HostPort(configuration.metrics.listen) {
                services.append(.init(service: MetricsServer(address: address, metrics: metrics, health: health, logger: logger)))
            }
            // Optional: if it ends (no jemalloc statistics), the worker goes on.
            services.append(.init(service: HeapSampler(), successTerminationBehavior: .ignore))
            services += try Worker(configuration: configuration, logger: logger, health: health).services()
            // The group gets no signals of its own: `signals` has had them since the start.
            var groupConfiguration = ServiceGroupConfiguration(services: services, logger: logger)
            groupConfiguration.maximumGracefulShutdownDuration = .milliseconds(configuration.worker.shutdownTimeoutMilliseconds + 15_000)
            let group = ServiceGroup(configuration: groupConfiguration)
            let events = signals.events
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask {
                    for await number in events {
                        logger.info("signal received: shutting down gracefully", metadata: ["signal": "\(number)"])
                        await group.triggerGracefulShutdown()
                    }
                }
                try await group.run()
                tasks.cancelAll()
            }
        } catch let problems as ConfigurationProblems {
            throw ExitFailure.configuration(problems.problems)
        } catch {
            logger.critical("worker stopped", metadata: ["error": "\(error)"])
            throw ExitCode(1)
        }
        logger.info("worker stopped cleanly")
    }
}

/// Loads and validates the configuration; problems exit 2, one line each.
func loadConfiguration(file: String?, kafkaOnly: Bool) async throws -> PushlineConfiguration {
    do {
        return try await ConfigurationLoader.load(file: file, kafkaOnly: kafkaOnly)
    } catch let problems as ConfigurationProblems {
        throw ExitFailure.configuration(problems.problems)
    }
}

/// Prints problems to standard error and exits with the contract's codes.
enum ExitFailure: Error {
    case configuration([String])

    static func report(_ lines: [String]) -> ExitCode {
        var standardError = StandardError()
        for line in lines {
            print(line, to: &standardError)
        }
        return ExitCode(2)
    }
}
