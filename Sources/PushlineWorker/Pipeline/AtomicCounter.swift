import Synchronization

/// A shared integer counter (the `Atomic` inside a class, so closures can share it).
final class AtomicCounter: Sendable {
    private let storage = Atomic<Int>(0)

    init() {}

    var value: Int { storage.load(ordering: .acquiring) }

    func add(_ delta: Int) {
        storage.wrappingAdd(delta, ordering: .acquiringAndReleasing)
    }
}
