import PushlineAPNSCore

/// Appends JSON to a byte buffer: strings escaped per RFC 8259, no Foundation, no intermediate tree.
///
/// Every result record goes through here, so the writer fills a buffer through a pointer (an
/// `Array` append costs a uniqueness and capacity check per fragment). `encode(estimate:_:)`
/// writes straight into the array it returns; otherwise the writer grows a buffer of its own,
/// freed in its deinit, and `bytes` copies it out.
struct JSONWriter: ~Copyable {
    private var base: UnsafeMutablePointer<UInt8>
    private(set) var capacity: Int
    /// Bytes written so far.
    private(set) var count = 0
    /// False while writing into a caller's buffer, which is not freed here.
    private var owned: Bool

    init(capacity: Int = 512) {
        self.capacity = max(16, capacity)
        base = .allocate(capacity: self.capacity)
        owned = true
    }

    private init(borrowing buffer: UnsafeMutableBufferPointer<UInt8>) {
        base = buffer.baseAddress!
        capacity = buffer.count
        owned = false
    }

    deinit {
        if owned { base.deallocate() }
    }

    /// The bytes `body` writes, in an array written in place when `estimate` bytes are enough (the
    /// usual case: one allocation, no copy); past it, the writer moves to a buffer of its own and
    /// the result is copied from there.
    static func encode(estimate: Int, _ body: (inout JSONWriter) -> Void) -> [UInt8] {
        var spilled: [UInt8]?
        let written = [UInt8](unsafeUninitializedCapacity: max(16, estimate)) { buffer, initialized in
            var json = JSONWriter(borrowing: buffer)
            body(&json)
            if json.owned {
                spilled = json.bytes
                initialized = 0
            } else {
                initialized = json.count
            }
        }
        return spilled ?? written
    }

    /// What was written so far.
    var bytes: [UInt8] {
        Array(UnsafeBufferPointer(start: base, count: count))
    }

    /// Calls `body` with the bytes written so far (valid only during the call).
    func withBytes<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        body(UnsafeRawBufferPointer(start: base, count: count))
    }

    /// Forgets what was written, keeping the buffer for the next writes.
    mutating func removeAll() {
        count = 0
    }

    /// Inlined (the check only): every byte appended asks, and the call was 0.85% of the worker
    /// at 1 token per job.
    @inline(__always)
    private mutating func reserve(_ extra: Int) {
        if count + extra > capacity { grow(extra) }
    }

    @inline(never)
    private mutating func grow(_ extra: Int) {
        let grown = max(capacity * 2, count + extra)
        let moved = UnsafeMutablePointer<UInt8>.allocate(capacity: grown)
        moved.initialize(from: base, count: count)
        if owned { base.deallocate() }
        base = moved
        capacity = grown
        owned = true
    }

    @inline(__always)
    private mutating func append(_ byte: UInt8) {
        reserve(1)
        base[count] = byte
        count += 1
    }

    @inline(__always)
    private mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
        reserve(bytes.count)
        (base + count).initialize(from: source, count: bytes.count)
        count += bytes.count
    }

    @inline(__always)
    mutating func raw(_ text: StaticString) {
        append(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// Bytes already encoded as JSON (a template's fixed part).
    mutating func raw(_ encoded: ArraySlice<UInt8>) {
        encoded.withUnsafeBufferPointer { append($0) }
    }

    /// A string's UTF-8 bytes as they are, unescaped (a record's key, beside its value).
    mutating func rawUTF8(_ text: String) {
        var text = text
        text.withUTF8 { append($0) }
    }

    mutating func string(_ value: String) {
        // Tokens, ids and reasons need no escape: copied in one go. The rest goes through the
        // one escaping routine every hand-written JSON in Pushline uses.
        var value = value
        let copied = value.withUTF8 { utf8 -> Bool in
            guard !utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) else { return false }
            append(UInt8(ascii: "\""))
            append(utf8)
            append(UInt8(ascii: "\""))
            return true
        }
        if !copied {
            var escaped: [UInt8] = []
            JSONString.append(value, to: &escaped)
            escaped.withUnsafeBufferPointer { append($0) }
        }
    }

    /// A string whose bytes need no escape (hex digits, say), between quotes.
    mutating func quotedPlain(_ bytes: UnsafeRawBufferPointer) {
        append(UInt8(ascii: "\""))
        append(bytes.assumingMemoryBound(to: UInt8.self))
        append(UInt8(ascii: "\""))
    }

    mutating func optionalString(_ value: String?) {
        if let value { string(value) } else { raw("null") }
    }

    mutating func integer<I: BinaryInteger>(_ value: I) {
        // Digits straight into the buffer: String(value) costs more than the rest of a field.
        guard let magnitude = UInt64(exactly: value.magnitude) else {
            var text = String(value)
            text.withUTF8 { append($0) }
            return
        }
        if value < 0 { append(UInt8(ascii: "-")) }
        unsigned(magnitude)
    }

    /// "00" to "99", for two digits per division (a constant: no lazy global to check).
    private static var digitPairs: StaticString {
        """
        00010203040506070809101112131415161718192021222324252627282930313233343536373839\
        4041424344454647484950515253545556575859606162636465666768697071727374757677787980\
        81828384858687888990919293949596979899
        """
    }

    /// A record's integers are mostly small (a status, a count, a partition): those take one
    /// branch; the rest two digits per step.
    @inline(__always)
    private mutating func unsigned(_ value: UInt64) {
        if value < 10 {
            append(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: value))
            return
        }
        var digits = 2
        var scale: UInt64 = 100
        while digits < 20 && value >= scale {
            digits += 1
            scale = scale &* 10
        }
        reserve(digits)
        let pairs = Self.digitPairs.utf8Start
        var remaining = value
        var position = count &+ digits
        while remaining >= 100 {
            let pair = Int(truncatingIfNeeded: remaining % 100) &* 2
            remaining /= 100
            position &-= 2
            base[position] = pairs[pair]
            base[position &+ 1] = pairs[pair &+ 1]
        }
        if remaining >= 10 {
            let pair = Int(truncatingIfNeeded: remaining) &* 2
            base[position &- 2] = pairs[pair]
            base[position &- 1] = pairs[pair &+ 1]
        } else {
            base[position &- 1] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: remaining)
        }
        count &+= digits
    }

    mutating func optionalInteger<I: BinaryInteger>(_ value: I?) {
        if let value { integer(value) } else { raw("null") }
    }

    /// A non-negative decimal with one digit after the point (latencies in ms).
    mutating func tenths(_ value: Double) {
        let scaled = value.isFinite ? UInt64(min((max(value, 0) * 10).rounded(), 1e18)) : 0
        unsigned(scaled / 10)
        reserve(2)
        base[count] = UInt8(ascii: ".")
        base[count &+ 1] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: scaled % 10)
        count &+= 2
    }

    mutating func bool(_ value: Bool) {
        if value { raw("true") } else { raw("false") }
    }

    /// `"key":` — keys are internal constants, never escaped.
    mutating func key(_ name: StaticString) {
        append(UInt8(ascii: "\""))
        raw(name)
        raw("\":")
    }
}
