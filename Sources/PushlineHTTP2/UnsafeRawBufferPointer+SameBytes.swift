#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension UnsafeRawBufferPointer {
    /// Whether these bytes are `other`'s, compared with one `memcmp`: the one byte comparison the
    /// HPACK encoder, its tables and the response headers use.
    func hasSameBytes(as other: UnsafeRawBufferPointer) -> Bool {
        guard count == other.count else { return false }
        guard let left = baseAddress, let right = other.baseAddress else { return true }
        return memcmp(left, right, count) == 0
    }

    /// Whether these bytes are `text`'s UTF-8.
    func hasSameBytes(as text: StaticString) -> Bool {
        hasSameBytes(as: UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }
}

extension Array where Element == UInt8 {
    /// Whether these bytes are `bytes`.
    func hasSameBytes(as bytes: UnsafeRawBufferPointer) -> Bool {
        withUnsafeBytes { $0.hasSameBytes(as: bytes) }
    }
}
