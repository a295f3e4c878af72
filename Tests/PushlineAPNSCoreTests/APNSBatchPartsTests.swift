import Testing

@testable import PushlineAPNSCore

/// The parts of a notification batch: reserved ids and device tokens as bytes.
@Suite struct APNSBatchPartsTests {
    /// A reserved block's ids are the generator's next ids, in order, each a canonical UUID.
    @Test func aBlockHoldsTheGeneratorsNextIDsInOrder() {
        let seed: UInt64 = 42
        let reserved = APNSIDGenerator(seed: seed)
        let stepped = APNSIDGenerator(seed: seed)
        _ = reserved.next()
        _ = stepped.next()
        let block = reserved.reserve(5)
        let expected = (0..<5).map { _ in stepped.next() }
        #expect((0..<5).map(block.id(at:)) == expected)
        #expect(Set(expected).count == 5)
        #expect(reserved.next() == stepped.next(), "the generator continues after the block")
        for id in expected {
            #expect(id.count == 36 && id == id.lowercased())
            #expect(id.split(separator: "-").map(\.count) == [8, 4, 4, 4, 12])
        }
    }

    @Test func deviceTokensKeepTheirBytesAndOrder() {
        var tokens = APNSDeviceTokens()
        tokens.reserveCapacity(tokens: 3)
        tokens.append("aa")
        tokens.append("bbbb")
        tokens.append("")
        #expect(tokens.count == 3)
        #expect((0..<3).map(tokens.token(at:)) == ["aa", "bbbb", ""])
        #expect(tokens.range(at: 1) == 2..<6)
        #expect(APNSDeviceTokens(["x", "yz"]) == APNSDeviceTokens(["x", "yz"]))
    }

    /// Tokens of one length keep no offsets; a token of another length switches to offsets
    /// without changing any token.
    @Test func uniformTokensThenAnotherLength() {
        var tokens = APNSDeviceTokens(["ab", "cd", "ef"])
        #expect((0..<3).map(tokens.range(at:)) == [0..<2, 2..<4, 4..<6])
        tokens.append("ghi")
        tokens.append("j")
        #expect((0..<5).map(tokens.token(at:)) == ["ab", "cd", "ef", "ghi", "j"])
        #expect(tokens.count == 5 && !tokens.isEmpty)
        #expect(APNSDeviceTokens().isEmpty)
    }
}
