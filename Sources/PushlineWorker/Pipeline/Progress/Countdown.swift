import Synchronization

/// Counts outstanding acknowledgements and runs `done` exactly once when they reach zero.
final class Countdown: Sendable {
    private let remaining: Atomic<Int>
    private let done: @Sendable () -> Void

    init(_ count: Int, done: @escaping @Sendable () -> Void) {
        precondition(count > 0)
        self.remaining = Atomic(count)
        self.done = done
    }

    func countDown() {
        if remaining.wrappingSubtract(1, ordering: .acquiringAndReleasing).newValue == 0 {
            done()
        }
    }
}
