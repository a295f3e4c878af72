import PushlineAPNSCore

/// The faults one connection of the mock injects, as a value: every-N-streams events (abrupt
/// close, GOAWAY, a dropped stream limit), the seeded 429/500/503 roll, and the response delay.
/// All randomness comes from one seeded generator, so a run repeats from its seed; `MockPolicy`
/// decides what APNs' rules say first, and only a request they accept meets the roll.
struct MockChaos {
    /// What the arrival of one stream triggers (any, all or none of them).
    struct StreamEvents: OptionSet, Hashable {
        let rawValue: UInt8
        /// Close TCP at once, without GOAWAY (`closeEvery`); the stream is not answered.
        static let closeAbruptly = StreamEvents(rawValue: 1)
        /// GOAWAY with this stream as last-stream-id (`goawayEvery`).
        static let goAway = StreamEvents(rawValue: 2)
        /// Lower the advertised limit to 1 for a while (`limitDropEvery`).
        static let dropLimit = StreamEvents(rawValue: 4)
    }

    /// A fault answer: 429 TooManyRequests, 500 InternalServerError or 503 ServiceUnavailable.
    struct Failure: Hashable {
        var status: Int
        var reason: APNSReason
    }

    let rate429: Double
    let rate500: Double
    let rate503: Double
    let goawayEvery: Int
    let closeEvery: Int
    let limitDropEvery: Int
    let latencyMilliseconds: Int
    let jitterMilliseconds: Int
    private var random: SplitMix64
    /// Streams started on this connection (the every-N counters).
    private(set) var streamsStarted = 0

    /// The chaos of `configuration` for connection number `connection`: each connection draws
    /// from its own sequence, derived from the seed and its number.
    init(configuration: MockConfiguration, connection: Int) {
        rate429 = configuration.rate429
        rate500 = configuration.rate500
        rate503 = configuration.rate503
        goawayEvery = configuration.goawayEvery
        closeEvery = configuration.closeEvery
        limitDropEvery = configuration.limitDropEvery
        latencyMilliseconds = configuration.latencyMilliseconds
        jitterMilliseconds = configuration.jitterMilliseconds
        random = SplitMix64(seed: configuration.seed &+ UInt64(connection) &* 0x2545_F491_4F6C_DD1D)
    }

    /// A stream arrived: counts it, and says which every-N events it triggers.
    mutating func streamStarted() -> StreamEvents {
        streamsStarted += 1
        var events: StreamEvents = []
        if Self.every(closeEvery, streamsStarted) { events.insert(.closeAbruptly) }
        if Self.every(goawayEvery, streamsStarted) { events.insert(.goAway) }
        if Self.every(limitDropEvery, streamsStarted) { events.insert(.dropLimit) }
        return events
    }

    private static func every(_ period: Int, _ count: Int) -> Bool {
        period > 0 && count % period == 0
    }

    /// The roll for a request APNs' rules accepted: a fault answer with the configured
    /// probabilities (429, then 500, then 503, from one uniform draw), or nil for a 200.
    mutating func failure() -> Failure? {
        let roll = random.unit()
        if roll < rate429 { return Failure(status: 429, reason: .tooManyRequests) }
        if roll < rate429 + rate500 { return Failure(status: 500, reason: .internalServerError) }
        if roll < rate429 + rate500 + rate503 { return Failure(status: 503, reason: .serviceUnavailable) }
        return nil
    }

    /// How long to hold the next answer: the latency plus a uniform jitter (drawn only when
    /// jitter is configured, so a run without it keeps the same roll sequence).
    mutating func responseDelay() -> Duration {
        var milliseconds = Double(latencyMilliseconds)
        if jitterMilliseconds > 0 {
            milliseconds += random.unit() * Double(jitterMilliseconds)
        }
        return .nanoseconds(Int64(milliseconds * 1_000_000))
    }
}
