import ServiceLifecycle

/// The loop of a sampling service: `sample` now and then every `interval`, until the task is
/// cancelled or a graceful shutdown begins. Nothing waits on it.
public enum PeriodicSampling {
    public static func run(every interval: Duration, _ sample: @escaping @Sendable () -> Void) async {
        await run(every: interval, state: ()) { _ in sample() }
    }

    /// The same loop for a sampler that carries `state` from one sample to the next.
    public static func run<State: Sendable>(
        every interval: Duration,
        state initial: State,
        _ sample: @escaping @Sendable (inout State) -> Void
    ) async {
        await cancelWhenGracefulShutdown {
            var state = initial
            while true {
                sample(&state)
                do {
                    try await Task.sleep(for: interval)
                } catch {
                    return
                }
            }
        }
    }
}
