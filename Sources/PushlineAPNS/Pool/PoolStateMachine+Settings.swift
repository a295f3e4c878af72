import PushlineAPNSCore

extension PoolStateMachine {
    /// What a pool is configured with (from `APNSClientConfiguration`); fixed for its life.
    struct Settings {
        var connections: Int
        var configuredCap: Int
        var tokenAuth: Bool
        var maxQueuedRequests: Int = 1_000_000
        var retryPolicy = RetryPolicy()
        var maxFreeResends = 50
        var health = AppHealth.Thresholds()
        /// How often queued requests are checked for deadlines (and, while held, the hold limit).
        var sweepInterval: Duration = .milliseconds(100)
        /// Pacing: at most this many requests per second leave the pool (nil = as fast as the
        /// streams allow). Retries and probes count too.
        var maxRate: Int?
        var seed: UInt64 = 0x5DEE_CE66_D1CE_4E5B
    }
}
