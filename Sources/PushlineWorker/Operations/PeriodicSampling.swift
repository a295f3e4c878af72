import ServiceLifecycle

/// The loop of a sampling service: `sample` now and then every `interval`, until the task is
/// cancelled or a graceful shutdown begins. Nothing waits on it.
public enum PeriodicSampling {
    public static func run(every interval: Duration, _ sample: @escaping @Sendable () -> Void) async {
        await cancelWhenGracefulShutdown {
            while true {
                sample()
                do {
                    try await Task.sleep(for: interval)
                } catch {
                    return
                }
            }
        }
    }
}
