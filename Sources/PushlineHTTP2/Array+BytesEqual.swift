#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension Array where Element == UInt8 {
    /// Whether these bytes are `bytes`, compared with one `memcmp`.
    func hasSameBytes(as bytes: UnsafeRawBufferPointer) -> Bool {
        count == bytes.count
            && withUnsafeBytes { bytes.isEmpty || memcmp($0.baseAddress!, bytes.baseAddress!, bytes.count) == 0 }
    }
}
