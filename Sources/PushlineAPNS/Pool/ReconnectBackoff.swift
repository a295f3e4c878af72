/// Delay before reconnecting after a failed or lost connection: exponential with jitter, capped,
/// reset once a connection has been up. APNs treats rapid reconnects as an attack, so the floor
/// is never zero.
public struct ReconnectBackoff: Sendable, Hashable {
    public var base: Duration
    public var cap: Duration
    public private(set) var failures = 0

    public init(base: Duration = .milliseconds(100), cap: Duration = .seconds(30)) {
        self.base = base
        self.cap = cap
    }

    /// Records a failure and returns how long to wait; `random` in 0..<1 spreads reconnects.
    public mutating func nextDelay(random: Double) -> Duration {
        let exponent = min(failures, 16)
        failures += 1
        let ceiling = min(base * (1 << exponent), cap)
        return ceiling * (0.5 + 0.5 * min(max(random, 0), 1))
    }

    /// The connection came up: start again from `base`.
    public mutating func reset() {
        failures = 0
    }
}
