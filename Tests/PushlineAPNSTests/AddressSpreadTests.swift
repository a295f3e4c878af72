import PushlineAPNSCore
import Testing

@testable import PushlineAPNS

/// A pool's connections spread over the host's addresses: fewest open first, round-robin on ties,
/// a failed address skipped until every one has failed.
@Suite struct AddressSpreadTests {
    @Test func connectionsGoToDifferentAddressesFirst() {
        var spread = AddressSpread<String>()
        let resolved = ["a", "b", "c"]
        var chosen: [String] = []
        for _ in 0..<4 {
            let address = spread.choose(from: resolved)!
            spread.opened(address)
            chosen.append(address)
        }
        #expect(Set(chosen.prefix(3)) == ["a", "b", "c"])
        #expect(spread.open.values.sorted() == [1, 1, 2])
    }

    @Test func aReconnectGoesWhereFewestAreOpen() {
        var spread = AddressSpread<String>()
        let resolved = ["a", "b", "c"]
        for _ in 0..<3 { spread.opened(spread.choose(from: resolved)!) }
        spread.closed("b")
        #expect(spread.choose(from: resolved) == "b")
    }

    @Test func aFailedAddressIsSkippedUntilAllHaveFailed() {
        var spread = AddressSpread<String>()
        let resolved = ["a", "b"]
        spread.connectFailed("a")
        for _ in 0..<5 { #expect(spread.choose(from: resolved) == "b") }
        spread.connectFailed("b")
        // Both failed: both are tried again.
        let again = Set((0..<4).map { _ in spread.choose(from: resolved)! })
        #expect(again == ["a", "b"])
        // A connect that works clears the address.
        spread.connectFailed("a")
        spread.opened("a")
        #expect(!spread.failed.contains("a"))
    }

    @Test func anAddressNoLongerResolvedIsNotChosen() {
        var spread = AddressSpread<String>()
        spread.opened("a")
        #expect(spread.choose(from: ["b"]) == "b")
        #expect(spread.choose(from: []) == nil)
    }

    /// Seeded random opens, closes, failures and re-resolutions: the choice is always a resolved
    /// address that has not failed (while one is left), with the fewest open connections.
    @Test func theChoiceIsAlwaysAResolvedUsableAddressWithTheFewestOpen() {
        var random = SplitMix64(seed: 0x5EED_AD0)
        var spread = AddressSpread<Int>()
        var open: [Int: Int] = [:]
        var failed: Set<Int> = []
        for _ in 0..<100_000 {
            let resolved = (0..<Int(random.next() % 5)).map { _ in Int(random.next() % 6) }.uniqued()
            switch random.next() % 4 {
            case 0:
                guard let chosen = spread.choose(from: resolved) else {
                    #expect(resolved.isEmpty)
                    continue
                }
                var usable = resolved.filter { !failed.contains($0) }
                if usable.isEmpty {
                    failed.subtract(resolved)
                    usable = resolved
                }
                #expect(usable.contains(chosen))
                let fewest = usable.map { open[$0, default: 0] }.min()!
                #expect(open[chosen, default: 0] == fewest)
            case 1:
                let address = Int(random.next() % 6)
                spread.opened(address)
                open[address, default: 0] += 1
                failed.remove(address)
            case 2:
                let address = Int(random.next() % 6)
                spread.closed(address)
                if let count = open[address] { open[address] = count > 1 ? count - 1 : nil }
            default:
                let address = Int(random.next() % 6)
                spread.connectFailed(address)
                failed.insert(address)
            }
            #expect(spread.open == open)
        }
    }
}

extension Array where Element: Hashable {
    fileprivate func uniqued() -> [Element] {
        var seen: Set<Element> = []
        return filter { seen.insert($0).inserted }
    }
}
