/// A consumed record, its bytes copied out of librdkafka (the C message is destroyed at once,
/// so held records never pin librdkafka's fetch buffers).
///
/// The key and the value are copied into one buffer, one after the other: one allocation per
/// record. `keyBytes` and `valueBytes` are slices of it (no copy); `key` and `value` copy.
///
/// A record the consumer's `KafkaRecordReader` read carries what it read in `reading`, and no
/// bytes: its key is nil, and its value and headers are empty.
///
/// Hand `id` back to `KafkaConsumer.complete(_:)` once the record's work is acknowledged.
public struct KafkaRecord: Sendable, Hashable {
    public var id: RecordID
    /// The key's bytes (when there is a key), then the value's.
    private var storage: [UInt8]
    /// How many of `storage`'s bytes are the key; nil when the record has no key.
    private var keyCount: Int?
    public var headers: [KafkaHeader]
    /// Milliseconds since the epoch (create or log-append time), nil when the broker sent none.
    public var timestampMilliseconds: Int64?
    /// What the consumer's `KafkaRecordReader` read in the record; nil when it was not read
    /// (then the key, value and headers are the record's).
    public var reading: (any AnyObject & Sendable)?
    /// What this consumer's owner kept of the record's work, done in part before its partition's
    /// assignment was lost (`KafkaConsumer.abandon(_:resumable:)`); nil for every other record.
    public var resumed: (any AnyObject & Sendable)?

    public init(id: RecordID, key: [UInt8]?, value: [UInt8], headers: [KafkaHeader], timestampMilliseconds: Int64?) {
        self.init(
            id: id,
            storage: (key ?? []) + value,
            keyCount: key?.count,
            headers: headers,
            timestampMilliseconds: timestampMilliseconds
        )
    }

    /// A record whose key (its first `keyCount` bytes, nil: none) and value share `storage`.
    init(
        id: RecordID,
        storage: [UInt8],
        keyCount: Int?,
        headers: [KafkaHeader],
        timestampMilliseconds: Int64?,
        reading: (any AnyObject & Sendable)? = nil
    ) {
        precondition((keyCount ?? 0) <= storage.count)
        self.id = id
        self.storage = storage
        self.keyCount = keyCount
        self.headers = headers
        self.timestampMilliseconds = timestampMilliseconds
        self.reading = reading
    }

    /// Equal records have equal fields, and the same reading and resumed objects (or none).
    public static func == (a: KafkaRecord, b: KafkaRecord) -> Bool {
        a.id == b.id && a.storage == b.storage && a.keyCount == b.keyCount && a.headers == b.headers
            && a.timestampMilliseconds == b.timestampMilliseconds
            && a.reading.map(ObjectIdentifier.init) == b.reading.map(ObjectIdentifier.init)
            && a.resumed.map(ObjectIdentifier.init) == b.resumed.map(ObjectIdentifier.init)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(id)
        hasher.combine(storage)
        hasher.combine(keyCount)
        hasher.combine(headers)
        hasher.combine(timestampMilliseconds)
        hasher.combine(reading.map(ObjectIdentifier.init))
        hasher.combine(resumed.map(ObjectIdentifier.init))
    }

    /// The key, without a copy; nil when the record has none.
    public var keyBytes: ArraySlice<UInt8>? { keyCount.map { storage[..<$0] } }

    /// The value, without a copy.
    public var valueBytes: ArraySlice<UInt8> { storage[(keyCount ?? 0)...] }

    /// The key, copied; nil when the record has none.
    public var key: [UInt8]? { keyBytes.map { Array($0) } }

    /// The value, copied.
    public var value: [UInt8] { Array(valueBytes) }

    public var topic: String { id.topic }
    public var partition: Int32 { id.partition }
    public var offset: Int64 { id.offset }
}
