import APNSCore
import Synchronization

/// What every connection of one mock server shares: configuration, credentials, the device rule,
/// stats and the recorder. Immutable after start but for the thread-safe stats and recorder.
final class MockShared: Sendable {
    let configuration: MockConfiguration
    let verifier: MockTokenVerifier
    let unregistered: UnregisteredRule
    let stats: MockStats
    let recorder: RequestRecorder?
    /// apns-id values for requests that came without one (APNs makes one up too).
    let ids = APNSIDGenerator()
    private let connectionCounter = Atomic<Int>(0)

    init(configuration: MockConfiguration, stats: MockStats) throws {
        self.configuration = configuration
        self.verifier = try MockTokenVerifier(configuration.authKeys)
        self.unregistered = UnregisteredRule(
            listed: configuration.unregisteredTokens,
            fraction: configuration.unregisteredFraction
        )
        self.stats = stats
        self.recorder = try configuration.recordFile.map(RequestRecorder.init(path:))
    }

    func nextConnectionID() -> Int {
        connectionCounter.wrappingAdd(1, ordering: .relaxed).newValue
    }

    /// Whether `topic` may be pushed to under the `--topic` list (any when the list is empty).
    func topicAllowed(_ topic: String) -> Bool {
        let topics = configuration.topics
        if topics.isEmpty || topics.contains(topic) { return true }
        return APNSPushType.allCases.contains { type in
            !type.topicSuffix.isEmpty && topic.hasSuffix(type.topicSuffix)
                && topics.contains(String(topic.dropLast(type.topicSuffix.count)))
        }
    }
}
