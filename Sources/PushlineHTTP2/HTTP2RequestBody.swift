import NIOCore

/// The body of a request submitted with `HTTP2ClientHandler.submit(tag:body:writeHeaders:)`: the
/// caller's bytes as they already are, read in place when nghttp2 asks for DATA (never copied into
/// a buffer of their own first).
///
/// An empty body (no bytes, or no readable bytes) sends the request as a HEADERS frame alone,
/// like a nil one.
public enum HTTP2RequestBody: Sendable {
    /// An array the caller already holds (e.g. an APNs payload, shared by every request of a job):
    /// only a reference to its storage is kept.
    case bytes([UInt8])
    /// A buffer's readable bytes (its reader index is left where it is).
    case buffer(ByteBuffer)

    /// The number of bytes the body sends.
    public var count: Int {
        switch self {
        case .bytes(let bytes): bytes.count
        case .buffer(let buffer): buffer.readableBytes
        }
    }

    /// Whether the body has no bytes to send.
    public var isEmpty: Bool { count == 0 }

    /// Copies the body's bytes from `offset` (those before it were sent) into `destination`, as
    /// many as fit; returns how many were copied.
    func copyBytes(from offset: Int, into destination: UnsafeMutableRawBufferPointer) -> Int {
        switch self {
        case .bytes(let bytes):
            bytes.withUnsafeBytes { Self.copy(UnsafeRawBufferPointer(rebasing: $0[offset...]), into: destination) }
        case .buffer(let buffer):
            buffer.withUnsafeReadableBytes { Self.copy(UnsafeRawBufferPointer(rebasing: $0[offset...]), into: destination) }
        }
    }

    private static func copy(_ source: UnsafeRawBufferPointer, into destination: UnsafeMutableRawBufferPointer) -> Int {
        let count = min(source.count, destination.count)
        if count > 0 { destination.baseAddress!.copyMemory(from: source.baseAddress!, byteCount: count) }
        return count
    }
}
