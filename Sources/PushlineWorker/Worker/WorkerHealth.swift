import PushlineAPNS
import PushlineAPNSCore
import Synchronization

/// What `/readyz` reports: the consumer joined its group and is not stuck in it (`GroupMonitor`),
/// every app has an active APNs connection, and no app is held after systemic APNs answers (a
/// held app is named, with the answer that holds it).
public final class WorkerHealth: Sendable {
    private struct State {
        var joined = false
        var clients: [String: APNSClient] = [:]
        var group: GroupMonitor?
    }

    private let state = Mutex(State())

    public init() {}

    func register(clients: [String: APNSClient]) {
        state.withLock { $0.clients = clients }
    }

    func register(group: GroupMonitor) {
        state.withLock { $0.group = group }
    }

    func groupJoined() {
        state.withLock { $0.joined = true }
    }

    /// Nil when ready, else why not.
    public func notReadyReason() -> String? {
        let (joined, clients, group) = state.withLock { ($0.joined, $0.clients, $0.group) }
        if clients.isEmpty { return "starting" }
        if !joined { return "consumer group not joined yet" }
        if let stuck = group?.notReadyReason { return stuck }
        let statuses = clients.mapValues { $0.status() }
        let down = statuses.filter { !$0.value.isReady }.keys.sorted()
        if !down.isEmpty { return "no active APNs connection for: \(down.joined(separator: ", "))" }
        let held = statuses.compactMap { name, status in status.hold.map { (name, $0) } }.sorted { $0.0 < $1.0 }
        if !held.isEmpty {
            let now = MonotonicInstant.now
            return held.map { name, hold in
                let status = hold.status == 0 ? "no response" : "\(hold.status)"
                return "app \(name) held: APNs answers \(status) \(hold.reason) (for \(Int((now - hold.since) / .seconds(1))) s; probing)"
            }.joined(separator: "; ")
        }
        return nil
    }
}
