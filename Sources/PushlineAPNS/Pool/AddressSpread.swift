/// Which of a host's addresses a pool's next connection goes to: the one with the fewest of the
/// pool's connections open on it, ties broken round-robin over the resolved list, skipping an
/// address whose last connect failed (until every address has failed). Apple asks providers to
/// spread their connections over APNs' addresses, so that one front end going bad takes one
/// connection, not all of them.
///
/// Pure state; `ConnectionAddresses` keeps one per pool under a lock.
struct AddressSpread<Address: Hashable>: Sendable where Address: Sendable {
    /// The pool's open connections per address.
    private(set) var open: [Address: Int] = [:]
    /// Addresses whose last connect failed.
    private(set) var failed: Set<Address> = []
    /// Where the round-robin over a resolved list starts next.
    private var cursor = 0

    /// The address for the next connect among `resolved` (the host's addresses, freshly resolved,
    /// in the resolver's order); nil when there are none.
    mutating func choose(from resolved: [Address]) -> Address? {
        guard !resolved.isEmpty else { return nil }
        var usable = resolved.filter { !failed.contains($0) }
        if usable.isEmpty {
            // Every address failed last time: try them all again rather than none.
            failed.subtract(resolved)
            usable = resolved
        }
        let start = cursor % usable.count
        cursor &+= 1
        var best: Address?
        var fewest = Int.max
        for offset in 0..<usable.count {
            let address = usable[(start + offset) % usable.count]
            let count = open[address, default: 0]
            if count < fewest {
                best = address
                fewest = count
            }
        }
        return best
    }

    /// A connection to `address` is open.
    mutating func opened(_ address: Address) {
        open[address, default: 0] += 1
        failed.remove(address)
    }

    /// A connection to `address` closed.
    mutating func closed(_ address: Address) {
        guard let count = open[address] else { return }
        open[address] = count > 1 ? count - 1 : nil
    }

    /// A connect to `address` failed: the next connects skip it while others are left.
    mutating func connectFailed(_ address: Address) {
        failed.insert(address)
    }
}
