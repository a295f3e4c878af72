/// Waits for `condition` to hold, checking every `interval`, failing after `timeout`.
/// Tests use this instead of sleeps: the wait ends as soon as the condition holds.
public func waitUntil(
    _ what: @autoclosure () -> String,
    timeout: Duration = .seconds(30),
    interval: Duration = .milliseconds(20),
    _ condition: () async throws -> Bool
) async throws {
    let clock = ContinuousClock()
    let deadline = clock.now.advanced(by: timeout)
    while true {
        if try await condition() { return }
        if clock.now >= deadline {
            throw TestSupportError("timed out after \(timeout) waiting for: \(what())")
        }
        try await Task.sleep(for: interval)
    }
}
