/// The HPACK dynamic table (RFC 7541, sections 2.3 and 4) as the peer's decoder holds it after
/// the request blocks we wrote: our insertions, newest first, evicted oldest first to stay within
/// the size the last dynamic table size update announced.
///
/// It stays tiny: Apple's rule inserts only a connection's first `apns-id`, `apns-expiration` and
/// `apns-collapse-id`, so lookups scan.
struct HPACKDynamicTable {
    private var entries: [(name: [UInt8], value: [UInt8])] = []
    /// The entries' size as RFC 7541 counts it (each: name + value + 32 bytes).
    private(set) var size = 0
    /// The size the decoder allows; HPACK starts every connection at 4,096 bytes.
    private(set) var maxSize = 4096
    /// Changes whenever an index may come to name another entry (an insertion, an eviction, a new
    /// maximum): an encoding that names a dynamic index holds only for the version it was made in.
    private(set) var version = 0

    /// The first dynamic entry's index on the wire (after the static table's 61).
    static let firstIndex = 62

    static func entrySize(name: Int, value: Int) -> Int { name + value + 32 }

    var count: Int { entries.count }

    /// A dynamic table size update (RFC 7541, section 6.3) was written: evicts down to `newMax`.
    mutating func resize(to newMax: Int) {
        maxSize = newMax
        evict(toFit: 0)
        version &+= 1
    }

    /// A literal with incremental indexing was written: the decoder adds it (section 4.4).
    mutating func insert(name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) {
        let added = Self.entrySize(name: name.count, value: value.count)
        version &+= 1
        guard added <= maxSize else {
            // An entry larger than the table empties it and is not added.
            entries.removeAll()
            size = 0
            return
        }
        evict(toFit: added)
        entries.insert((Array(name), Array(value)), at: 0)
        size += added
    }

    /// The wire index of the newest entry named `name`, and of the newest with `value` too.
    func find(name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer?) -> (nameIndex: Int?, exactIndex: Int?) {
        var nameIndex: Int?
        for (offset, entry) in entries.enumerated() where entry.name.hasSameBytes(as: name) {
            if nameIndex == nil { nameIndex = Self.firstIndex + offset }
            if let value, entry.value.hasSameBytes(as: value) { return (nameIndex, Self.firstIndex + offset) }
        }
        return (nameIndex, nil)
    }

    private mutating func evict(toFit added: Int) {
        while size + added > maxSize, let oldest = entries.popLast() {
            size -= Self.entrySize(name: oldest.name.count, value: oldest.value.count)
        }
    }
}
