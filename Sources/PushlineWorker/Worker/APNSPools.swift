import Logging
import NIOCore
import NIOPosix
import PushlineAPNS
import PushlineKafka
import ServiceLifecycle

/// The APNs client pools, one per app, on one shared group of event loops, as a Service: the
/// pools connect when the service group runs and close on graceful shutdown, which comes after
/// the consumer has committed (so nothing the closing pools end is ever committed). Requests
/// still queued or held then end as `shutdown` and publish nothing.
final class APNSPools: Service, Sendable {
    let clients: [String: APNSClient]
    /// Signalled each time an app is held or a hold ends.
    let holdChanged = ChangeSignal()
    private let group: MultiThreadedEventLoopGroup
    private let health: WorkerHealth
    private let logger: Logger

    /// `outcomeScope` wraps each run of outcomes the pools hand out (the result publisher's batch).
    init(configuration: PushlineConfiguration, health: WorkerHealth, logger: Logger, outcomeScope: (any APNSOutcomeScope)? = nil) throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: System.coreCount)
        do {
            self.clients = try APNSClients.make(configuration, group: group, outcomeScope: outcomeScope)
        } catch {
            try? group.syncShutdownGracefully()
            throw error
        }
        self.group = group
        self.health = health
        self.logger = logger
        for client in clients.values {
            client.onHoldChange { [holdChanged] _ in holdChanged.signal() }
        }
    }

    func run() async throws {
        for (name, client) in clients.sorted(by: { $0.key < $1.key }) {
            logger.info(
                "APNs pool starting",
                metadata: [
                    "app": "\(name)", "endpoint": "\(client.configuration.endpoint)",
                    "connections": "\(client.configuration.connections)",
                    "proxy": "\(client.configuration.proxy.map { "\($0)" } ?? "none")",
                ]
            )
            client.start()
        }
        health.register(clients: clients)
        // Cancellation (another service failed) ends the wait too: the pools close either way.
        try? await gracefulShutdown()
        // All at once: each closes politely, waiting (up to its closeTimeout) for the streams it
        // still has in flight, and one pool's wait need not come after another's.
        await withTaskGroup(of: Void.self) { closing in
            for client in clients.values {
                closing.addTask { await client.shutdown() }
            }
        }
        try? await group.shutdownGracefully()
    }

    /// A revoke's notice: `began` withdraws what held apps keep of the revoked partitions (it
    /// cannot go out before the partitions move), `givingUp` everything of theirs not yet sent.
    /// Either way their jobs are abandoned, and the partitions' next owner sends them, once.
    func withdraw(_ notice: RevokeNotice) {
        let onlyWhileHeld = notice.stage == .began
        var withdrawn = 0
        for client in clients.values {
            withdrawn += client.withdraw(groups: notice.generations, onlyWhileHeld: onlyWhileHeld)
        }
        guard withdrawn > 0 else { return }
        logger.notice(
            "withdrew \(withdrawn) unsent notifications of revoked partitions; their next owner sends them",
            metadata: [
                "partitions": "\(notice.partitions)",
                "why": "\(onlyWhileHeld ? "their app is held" : "the revoke gave up waiting")",
            ]
        )
    }

    /// Whether some app is held and every other pool is idle: what the pools still hold will not
    /// finish soon.
    func onlyHeldWorkLeft() -> Bool {
        let statuses = clients.values.map { $0.status() }
        return statuses.contains { $0.hold != nil } && statuses.allSatisfy { $0.hold != nil || $0.isIdle }
    }
}
