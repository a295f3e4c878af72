import APNSCore

/// Appends JSON to a byte buffer: strings escaped per RFC 8259, no Foundation, no intermediate tree.
struct JSONWriter {
    private(set) var bytes: [UInt8] = []

    init(capacity: Int = 256) {
        bytes.reserveCapacity(capacity)
    }

    mutating func raw(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    mutating func string(_ value: String) {
        JSONString.append(value, to: &bytes)
    }

    mutating func optionalString(_ value: String?) {
        if let value { string(value) } else { raw("null") }
    }

    mutating func integer<I: BinaryInteger>(_ value: I) {
        // Digits straight into the buffer: String(value) costs more than the rest of a field.
        guard let magnitude = UInt64(exactly: value.magnitude) else {
            bytes.append(contentsOf: String(value).utf8)
            return
        }
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        var remaining = magnitude
        let start = bytes.count
        repeat {
            bytes.append(UInt8(ascii: "0") + UInt8(remaining % 10))
            remaining /= 10
        } while remaining > 0
        bytes[start...].reverse()
    }

    mutating func optionalInteger<I: BinaryInteger>(_ value: I?) {
        if let value { integer(value) } else { raw("null") }
    }

    /// A non-negative decimal with one digit after the point (latencies in ms).
    mutating func tenths(_ value: Double) {
        let scaled = value.isFinite ? Int64((max(value, 0) * 10).rounded()) : 0
        integer(scaled / 10)
        bytes.append(UInt8(ascii: "."))
        integer(scaled % 10)
    }

    mutating func bool(_ value: Bool) {
        if value { raw("true") } else { raw("false") }
    }

    /// `"key":` — keys are internal constants, never escaped.
    mutating func key(_ name: StaticString) {
        bytes.append(UInt8(ascii: "\""))
        raw(name)
        raw("\":")
    }
}
