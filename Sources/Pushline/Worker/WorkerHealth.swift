import APNS
import Synchronization

/// What `/readyz` reports: the consumer joined its group and every app has an active APNs
/// connection.
public final class WorkerHealth: Sendable {
    private struct State {
        var joined = false
        var clients: [String: APNSClient] = [:]
    }

    private let state = Mutex(State())

    public init() {}

    func register(clients: [String: APNSClient]) {
        state.withLock { $0.clients = clients }
    }

    func groupJoined() {
        state.withLock { $0.joined = true }
    }

    /// Nil when ready, else why not.
    public func notReadyReason() -> String? {
        let (joined, clients) = state.withLock { ($0.joined, $0.clients) }
        if clients.isEmpty { return "starting" }
        if !joined { return "consumer group not joined yet" }
        let down = clients.filter { !$0.value.status().isReady }.keys.sorted()
        if !down.isEmpty { return "no active APNs connection for: \(down.joined(separator: ", "))" }
        return nil
    }
}
