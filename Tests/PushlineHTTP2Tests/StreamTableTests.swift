import PushlineAPNSCore
import Testing

@testable import PushlineHTTP2

@Suite struct StreamTableTests {
    @Test func insertsLooksUpAndRemoves() {
        var table = StreamTable<String>(minimumCapacity: 4)
        #expect(table.isEmpty && table[1] == nil)
        table.insert("one", for: 1)
        table.insert("three", for: 3)
        table.insert("three again", for: 3)
        #expect(table.count == 2)
        #expect(table[1] == "one" && table[3] == "three again" && table[5] == nil)
        #expect(table.removeValue(forKey: 1) == "one")
        #expect(table.removeValue(forKey: 1) == nil)
        #expect(table[3] == "three again" && table.count == 1)
        table.removeAll()
        #expect(table.isEmpty && table[3] == nil)
    }

    /// A stream that stays open while many later ones come and go: later ids wrap around the
    /// table onto its slot and must probe past it, and removing entries of such a run must keep
    /// the rest reachable.
    @Test func aLongLivedStreamSharesItsSlotWithLaterIds() {
        var table = StreamTable<Int32>(minimumCapacity: 8)
        table.insert(1, for: 1)
        var open: [Int32] = []
        for id in stride(from: Int32(3), through: 2001, by: 2) {
            table.insert(id, for: id)
            open.append(id)
            if open.count > 5 { #expect(table.removeValue(forKey: open.removeFirst()) != nil) }
            #expect(table[1] == 1)
            for id in open { #expect(table[id] == id) }
        }
        #expect(table.count == open.count + 1)
    }

    /// Random inserts and removals of client-like ids (odd, mostly increasing, finishing out of
    /// order), with growth, checked against a dictionary after every step.
    @Test func agreesWithADictionaryUnderRandomTraffic() {
        var generator = SplitMix64(seed: 0x5EED)
        var table = StreamTable<Int>(minimumCapacity: 2)
        var model: [Int32: Int] = [:]
        var nextID: Int32 = 1
        for step in 0..<20_000 {
            if model.isEmpty || (model.count < 300 && Int.random(in: 0..<10, using: &generator) < 6) {
                table.insert(step, for: nextID)
                model[nextID] = step
                nextID += 2
            } else {
                let victim = model.keys.randomElement(using: &generator)!
                #expect(table.removeValue(forKey: victim) == model.removeValue(forKey: victim))
            }
            #expect(table.count == model.count)
            if step % 97 == 0 {
                for (key, value) in model { #expect(table[key] == value) }
                #expect(table[nextID] == nil)
                #expect(Set(table.entries.map(\.key)) == Set(model.keys))
            }
        }
    }
}
