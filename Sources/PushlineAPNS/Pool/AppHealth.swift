import PushlineAPNSCore

/// One app's health as APNs sees it: a pure state machine fed with every answer's scope.
///
/// Systemic answers (`APNSAnswerScope.systemic`: the key, the certificate, the topic, APNs
/// itself, transport failures) are judged by their rate over a short sliding window. When they
/// dominate, the app is *held*: it sends nothing new but one probe at a time, with backoff, and
/// the first probe that gets a notification-level answer resumes it. Requests answered while
/// held are requeued, not finalized (see `PoolStateMachine`).
///
/// The window is a ring of eight buckets covering `thresholds.window`: recording an answer is an
/// index computation and an increment, cheap enough for every response.
public struct AppHealth: Sendable {
    public struct Thresholds: Sendable, Hashable {
        /// Systemic answers in the window before a hold may start.
        public var minimumSystemic: Int
        /// The share of systemic answers in the window that starts a hold.
        public var ratio: Double
        /// How far back the window reaches.
        public var window: Duration
        /// The first wait between probes, doubled after each failed probe up to `probeMaximum`.
        public var probeBase: Duration
        public var probeMaximum: Duration
        /// How long one request may wait in a hold before it is finalized with the last
        /// systemic answer.
        public var holdLimit: Duration

        public init(
            minimumSystemic: Int = 10,
            ratio: Double = 0.5,
            window: Duration = .seconds(2),
            probeBase: Duration = .seconds(1),
            probeMaximum: Duration = .seconds(30),
            holdLimit: Duration = .seconds(900)
        ) {
            self.minimumSystemic = max(1, minimumSystemic)
            self.ratio = min(max(ratio, 0.01), 1)
            self.window = window > .zero ? window : .seconds(2)
            self.probeBase = probeBase
            self.probeMaximum = max(probeBase, probeMaximum)
            self.holdLimit = holdLimit
        }
    }

    /// Why an app is held: the systemic answer that tipped it.
    public struct Hold: Sendable, Hashable {
        public var since: MonotonicInstant
        /// HTTP status (0 for a transport failure) and reason (or the transport failure's name).
        public var status: Int
        public var reason: String
        /// Probes that failed since the hold started.
        public var failedProbes: Int
    }

    /// A change worth one log line and a gauge update.
    public enum Transition: Sendable, Hashable {
        case held(Hold)
        case resumed(after: Duration, failedProbes: Int)
    }

    /// While held, where the probing stands.
    public enum Probe: Sendable, Hashable {
        /// The next probe may go at this time.
        case due(MonotonicInstant)
        /// A probe request is out; no other goes until it is answered. `due` is when it was
        /// allowed to go (another may go from then on if it comes back without a verdict).
        case inFlight(due: MonotonicInstant)
    }

    /// Whether the app sends freely or is held (and then, its probing).
    public enum Phase: Sendable, Hashable {
        case serving
        case held(Hold, Probe)
    }

    public let thresholds: Thresholds
    public private(set) var phase: Phase = .serving

    private let origin: MonotonicInstant
    private let bucketNanoseconds: Int64
    private static let bucketCount = 8
    private var epochs = [Int64](repeating: -1, count: AppHealth.bucketCount)
    private var good = [Int](repeating: 0, count: AppHealth.bucketCount)
    private var systemic = [Int](repeating: 0, count: AppHealth.bucketCount)

    public init(thresholds: Thresholds = Thresholds(), origin: MonotonicInstant = .now) {
        self.thresholds = thresholds
        self.origin = origin
        self.bucketNanoseconds = max(1, thresholds.window.wholeNanoseconds / Int64(Self.bucketCount))
    }

    /// Why the app is held; nil while it is serving.
    public var hold: Hold? {
        guard case .held(let hold, _) = phase else { return nil }
        return hold
    }

    public var isHeld: Bool { hold != nil }

    /// A probe request is out; no other goes until it is answered.
    public var probeInFlight: Bool {
        guard case .held(_, .inFlight) = phase else { return false }
        return true
    }

    /// The earliest time the next probe may go (while held).
    public var nextProbeAt: MonotonicInstant? {
        switch phase {
        case .serving: nil
        case .held(_, .due(let at)), .held(_, .inFlight(let at)): at
        }
    }

    // MARK: Answers

    /// `count` notification-level answers arrived. While held, only a probe's answer resumes
    /// the app (`probeAnswered`): requests sent before the hold prove little about now.
    public mutating func recordNotificationLevel(_ count: Int = 1, now: MonotonicInstant) {
        let slot = bucket(now)
        good[slot] += count
    }

    /// A systemic answer arrived; returns `.held` when it starts a hold.
    public mutating func recordSystemic(status: Int, reason: String, now: MonotonicInstant) -> Transition? {
        let slot = bucket(now)
        systemic[slot] += 1
        guard hold == nil else { return nil }
        let (good, systemic) = totals(now)
        guard systemic >= thresholds.minimumSystemic,
            Double(systemic) >= thresholds.ratio * Double(good + systemic)
        else { return nil }
        let started = Hold(since: now, status: status, reason: reason, failedProbes: 0)
        phase = .held(started, .due(now + thresholds.probeBase))
        return .held(started)
    }

    /// Whether recent answers show the app working: some notification-level answers and no
    /// systemic storm. A non-retryable systemic answer (TopicDisallowed for one job's topic, say)
    /// is final only then; without such evidence it is retried until the rate decides.
    public func provenHealthy(now: MonotonicInstant) -> Bool {
        guard hold == nil else { return false }
        let (good, systemic) = totals(now)
        return good > 0 && Double(systemic) < thresholds.ratio * Double(good + systemic)
    }

    // MARK: Probes

    /// Whether a probe may go now.
    public func mayProbe(now: MonotonicInstant) -> Bool {
        guard case .held(_, .due(let at)) = phase else { return false }
        return now >= at
    }

    public mutating func probeSent() {
        guard case .held(let hold, .due(let at)) = phase else { return }
        phase = .held(hold, .inFlight(due: at))
    }

    /// The probe got no verdict (refused stream, not sent): another may go at once.
    public mutating func probeReturned() {
        guard case .held(let hold, .inFlight(let at)) = phase else { return }
        phase = .held(hold, .due(at))
    }

    /// The probe got a notification-level answer: the app resumes.
    public mutating func probeSucceeded(now: MonotonicInstant) -> Transition? {
        guard case .held(let ended, _) = phase else { return nil }
        phase = .serving
        // The storm is over: start the window afresh, so its answers do not hold the app again.
        for index in epochs.indices {
            epochs[index] = -1
            good[index] = 0
            systemic[index] = 0
        }
        recordNotificationLevel(now: now)
        return .resumed(after: now - ended.since, failedProbes: ended.failedProbes)
    }

    /// The probe got a systemic answer too: wait longer before the next one. `random` in 0..<1.
    public mutating func probeFailed(now: MonotonicInstant, random: Double) {
        guard case .held(var current, _) = phase else { return }
        current.failedProbes += 1
        let exponent = min(current.failedProbes, 16)
        let ceiling = min(thresholds.probeBase * (1 << exponent), thresholds.probeMaximum)
        phase = .held(current, .due(now + ceiling * (0.5 + 0.5 * min(max(random, 0), 1))))
    }

    // MARK: Window

    private mutating func bucket(_ now: MonotonicInstant) -> Int {
        let epoch = max(0, now.nanoseconds(since: origin) / bucketNanoseconds)
        let slot = Int(epoch % Int64(Self.bucketCount))
        if epochs[slot] != epoch {
            epochs[slot] = epoch
            good[slot] = 0
            systemic[slot] = 0
        }
        return slot
    }

    /// Answers in the window ending at `now`.
    func totals(_ now: MonotonicInstant) -> (good: Int, systemic: Int) {
        let epoch = max(0, now.nanoseconds(since: origin) / bucketNanoseconds)
        var totalGood = 0
        var totalSystemic = 0
        for slot in 0..<Self.bucketCount where epochs[slot] >= 0 && epoch - epochs[slot] < Int64(Self.bucketCount) {
            totalGood += good[slot]
            totalSystemic += systemic[slot]
        }
        return (totalGood, totalSystemic)
    }
}
