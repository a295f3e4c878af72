import PushlineAPNSCore
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What every connection of one mock server shares: configuration, credentials, the device rule,
/// stats, the recorder and the outage window. Immutable after start but for the thread-safe
/// stats, recorder and outage window.
final class MockShared: Sendable {
    let configuration: MockConfiguration
    let verifier: MockTokenVerifier
    let unregistered: UnregisteredRule
    let stats: MockStats
    let recorder: RequestRecorder?
    /// apns-id values for requests that came without one (APNs makes one up too).
    let ids = APNSIDGenerator()
    /// Every app's broadcast channels, shared by all connections (channel-management requests
    /// and broadcasts are rare next to pushes: one lock is enough).
    let channels: Mutex<MockChannelStore>
    private let connectionCounter = Atomic<Int>(0)
    /// The timed outage, shared by every connection (they live on different loops); nil = none.
    private let outage: Mutex<MockOutage?>
    private let outageConfigured: Bool
    /// Set once the outage is over, so later requests skip the lock.
    private let outageOver = Atomic<Bool>(false)
    private let outageReason: APNSReason

    init(configuration: MockConfiguration, stats: MockStats) throws {
        let problems = configuration.outageScopeProblems
        guard problems.isEmpty else { throw MockError(problems.joined(separator: "; ")) }
        self.configuration = configuration
        self.verifier = try MockTokenVerifier(configuration.authKeys)
        self.unregistered = UnregisteredRule(
            listed: configuration.unregisteredTokens,
            fraction: configuration.unregisteredFraction
        )
        self.stats = stats
        self.channels = Mutex(MockChannelStore(maxChannels: configuration.maxChannels, seed: configuration.seed))
        self.recorder = try configuration.recordFile.map(RequestRecorder.init(path:))
        let outage = MockOutage(configuration)
        self.outageConfigured = outage != nil
        self.outage = Mutex(outage)
        self.outageReason = APNSReason(rawValue: configuration.outageReason)
    }

    /// Whether an outage is configured and not over yet: only then may a request get its answer
    /// (and only then is a request read for the outage's scope).
    var outagePending: Bool { outageConfigured && !outageOver.load(ordering: .relaxed) }

    /// The timed outage's answer to a request it covers arriving now, or nil when it is answered
    /// normally (no outage configured, not started yet, or over). Every call counts toward the
    /// start: a connection calls this only for requests in the outage's scope (`MockOutageScope`).
    func outageAnswer() -> (status: Int, reason: APNSReason)? {
        guard outagePending else { return nil }
        let now = ContinuousClock.now
        let (answer, opened, over) = outage.withLock { outage in
            let waiting = outage?.startedAt == nil
            let answer = outage?.answer(now: now)
            return (answer, waiting && outage?.startedAt != nil, outage?.phase(at: now) == .over)
        }
        if over { outageOver.store(true, ordering: .relaxed) }
        if opened {
            let wall = Self.unixSeconds()
            stats.outageStarted(at: wall, endsAt: wall + configuration.outageSeconds)
        }
        return answer.map { (status: $0.status, reason: outageReason) }
    }

    private static func unixSeconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    func nextConnectionID() -> Int {
        connectionCounter.wrappingAdd(1, ordering: .relaxed).newValue
    }
}
