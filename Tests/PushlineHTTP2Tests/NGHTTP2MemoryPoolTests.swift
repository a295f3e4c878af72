import Testing

@testable import PushlineHTTP2

/// The client session's allocator: freed blocks come back for the next request of their size
/// class, contents survive a reallocation, and blocks above 2 KiB bypass the lists.
@Suite struct NGHTTP2MemoryPoolTests {
    @Test func aFreedBlockServesTheNextAllocationOfItsSizeClass() throws {
        let pool = NGHTTP2MemoryPool()
        let first = try #require(pool.allocate(40))
        let other = try #require(pool.allocate(100))
        pool.deallocate(first)
        #expect(pool.allocate(64) == first, "40 and 64 bytes share the first 64-byte class")
        #expect(pool.allocate(10) != first, "taken again: a new block")
        pool.deallocate(other)
        #expect(pool.allocate(128) == other)
    }

    @Test func reallocationKeepsTheBytesAndGrowsOnlyPastTheBlocksCapacity() throws {
        let pool = NGHTTP2MemoryPool()
        let block = try #require(pool.allocate(10))
        for index in 0..<10 { block.storeBytes(of: UInt8(index), toByteOffset: index, as: UInt8.self) }
        #expect(pool.reallocate(block, 60) == block, "still within the 64-byte block")
        let grown = try #require(pool.reallocate(block, 500))
        #expect(grown != block)
        #expect((0..<10).allSatisfy { grown.load(fromByteOffset: $0, as: UInt8.self) == UInt8($0) })
        #expect(pool.allocate(64) == block, "the old block went back on its list")
        pool.deallocate(grown)
    }

    @Test func largeBlocksAreNotKept() throws {
        let pool = NGHTTP2MemoryPool()
        let large = try #require(pool.allocate(4096))
        large.storeBytes(of: 7, toByteOffset: 4095, as: UInt8.self)
        pool.deallocate(large)
        let small = try #require(pool.allocate(2048))
        pool.deallocate(small)
        #expect(pool.allocate(2048) == small, "2 KiB is the largest class kept")
    }
}
