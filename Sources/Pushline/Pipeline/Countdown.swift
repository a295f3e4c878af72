import Synchronization

/// Counts outstanding acknowledgements and runs `done` exactly once when they reach zero.
/// `add` may raise the count while it is above zero (a token's outcome adds its extra records).
final class Countdown: Sendable {
    private let remaining: Atomic<Int>
    private let done: @Sendable () -> Void

    init(_ count: Int, done: @escaping @Sendable () -> Void) {
        precondition(count > 0)
        self.remaining = Atomic(count)
        self.done = done
    }

    func add(_ n: Int) {
        remaining.wrappingAdd(n, ordering: .relaxed)
    }

    func countDown() {
        if remaining.wrappingSubtract(1, ordering: .acquiringAndReleasing).newValue == 0 {
            done()
        }
    }
}

/// A shared integer counter (the `Atomic` inside a class, so closures can share it).
final class AtomicCounter: Sendable {
    private let storage = Atomic<Int>(0)

    init() {}

    var value: Int { storage.load(ordering: .acquiring) }

    func add(_ delta: Int) {
        storage.wrappingAdd(delta, ordering: .acquiringAndReleasing)
    }
}
