import Foundation

/// Runs `body` on a thread of its own and returns what it returns.
///
/// Swift's cooperative pool has one thread per core: two on CI. A test that blocks one of them
/// (waiting for a child process, a pipe, a socket or a synchronous librdkafka call) stops every
/// other test of the run for as long: in the broker stage (23 suites side by side) two harnesses
/// waiting for their brokers to stop held both threads, and every other test stood still, timing
/// out or missing its bounds. Whatever a test waits for without `await` goes through here.
public func offThePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}

/// `offThePool` for a body that cannot fail.
public func offThePool<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        Thread { continuation.resume(returning: body()) }.start()
    }
}
