/// The open streams of one connection by stream id: a direct-mapped table indexed by `id >> 1`,
/// with a dictionary for the rare id whose slot is taken.
///
/// A handler looks a stream up for every callback nghttp2 makes about it (each header, the frame
/// sent, the body read, the end), six or more times per request. `Dictionary` hashes each of those
/// with SipHash. A client's stream ids (1, 3, 5, ...) fall into consecutive slots here, so a lookup
/// is one index and one comparison. Only a stream still open when the ids have gone once around
/// the table shares its slot with a newer one; the newer one then lives in `overflow`. The table
/// grows to stay at least twice the open streams, so that is rare. Ids must be positive.
struct StreamTable<Value> {
    /// 0 marks an empty slot (stream ids are positive).
    private var keys: [Int32]
    private var values: [Value?]
    private var overflow: [Int32: Value] = [:]
    private var mask: Int
    private(set) var count = 0

    init(minimumCapacity: Int = 64) {
        var capacity = 16
        while capacity < minimumCapacity * 2 { capacity *= 2 }
        keys = Array(repeating: 0, count: capacity)
        values = Array(repeating: nil, count: capacity)
        mask = capacity - 1
    }

    var isEmpty: Bool { count == 0 }

    private func slot(_ key: Int32) -> Int {
        Int(UInt32(bitPattern: key) >> 1) & mask
    }

    subscript(key: Int32) -> Value? {
        let index = slot(key)
        if keys[index] == key { return values[index] }
        return overflow.isEmpty ? nil : overflow[key]
    }

    /// Adds `value` for `key`, replacing the value already there.
    mutating func insert(_ value: Value, for key: Int32) {
        precondition(key > 0, "stream ids are positive")
        if (count + 1) * 2 > keys.count { grow() }
        let index = slot(key)
        if keys[index] == key {
            values[index] = value
        } else if keys[index] == 0 && (overflow.isEmpty || overflow[key] == nil) {
            keys[index] = key
            values[index] = value
            count += 1
        } else {
            if overflow.updateValue(value, forKey: key) == nil { count += 1 }
        }
    }

    @discardableResult
    mutating func removeValue(forKey key: Int32) -> Value? {
        let index = slot(key)
        if keys[index] == key {
            let removed = values[index]
            keys[index] = 0
            values[index] = nil
            count -= 1
            return removed
        }
        guard !overflow.isEmpty, let removed = overflow.removeValue(forKey: key) else { return nil }
        count -= 1
        return removed
    }

    mutating func removeAll() {
        for index in keys.indices where keys[index] != 0 {
            keys[index] = 0
            values[index] = nil
        }
        overflow.removeAll()
        count = 0
    }

    /// Every entry, in no particular order (for the rare walks: connection closed, GOAWAY).
    var entries: [(key: Int32, value: Value)] {
        var entries: [(key: Int32, value: Value)] = []
        entries.reserveCapacity(count)
        for index in keys.indices where keys[index] != 0 {
            entries.append((keys[index], values[index]!))
        }
        for (key, value) in overflow { entries.append((key, value)) }
        return entries
    }

    private mutating func grow() {
        let old = entries
        let capacity = keys.count * 2
        keys = Array(repeating: 0, count: capacity)
        values = Array(repeating: nil, count: capacity)
        overflow = [:]
        mask = capacity - 1
        count = 0
        for (key, value) in old { insert(value, for: key) }
    }
}
