import COpenSSL
import NIOCore

/// A BIO whose read side drains the `ByteBuffer`s received from the socket and whose write side
/// appends to one outbound `ByteBuffer`, so ciphertext is copied once in each direction (into or
/// out of OpenSSL's record buffers) and every record written between two flushes leaves in one
/// socket write.
///
/// The `SSL` owns the `BIO*` (after `SSL_set_bio`); the BIO refers back to this object without
/// retaining it. `TLSConnection` owns both and frees the `SSL` (and with it the BIO) first.
final class ByteBufferBIO {
    /// Borrowed once handed to `SSL_set_bio`.
    let bio: OpaquePointer
    // `@exclusivity(unchecked)` on the hot properties: confined to the channel's event loop and
    // never accessed re-entrantly; their run-time checks showed in the worker's profile
    // (docs/architecture.md, "Unsafe constructs on the hot path").
    /// Received ciphertext not yet consumed by OpenSSL.
    @exclusivity(unchecked) private var inbound: ByteBuffer?
    /// Ciphertext produced by OpenSSL, not yet taken. Its storage is reused after the socket
    /// released the last write (`clear(minimumCapacity:)` only allocates if it is still shared).
    @exclusivity(unchecked) private var outbound: ByteBuffer
    /// The size of the last ciphertext taken: new outbound storage starts that large, so a
    /// burst's records do not grow it by doubling, each growth a copy.
    @exclusivity(unchecked) private var lastTakenBytes = 0
    private static let outboundCapacity = 16 * 1024 + 256
    /// Above this, outbound storage is dropped rather than kept for reuse (bounds memory per connection).
    private static let retainedOutboundCapacity = 256 * 1024

    init(allocator: ByteBufferAllocator) throws {
        ERR_clear_error()
        guard let bio = BIO_new(byteBufferBIOMethod) else {
            throw TLSError.invalidConfiguration(["cannot create BIO: \(OpenSSLErrorStack.drain())"])
        }
        self.bio = bio
        self.outbound = allocator.buffer(capacity: Self.outboundCapacity)
        BIO_set_data(bio, Unmanaged.passUnretained(self).toOpaque())
    }

    /// Queues received ciphertext for OpenSSL; takes the buffer without copying when nothing is queued.
    func receive(_ buffer: ByteBuffer) {
        if var existing = inbound, existing.readableBytes > 0 {
            // Dropping `inbound` first keeps `existing` uniquely referenced, so appending does not copy the old part.
            inbound = nil
            var incoming = buffer
            existing.writeBuffer(&incoming)
            inbound = existing
        } else {
            inbound = buffer
        }
    }

    /// Bytes received but not yet consumed by OpenSSL.
    var inboundBytes: Int { inbound?.readableBytes ?? 0 }

    /// Takes all ciphertext produced so far, for one socket write.
    func takeOutbound() -> ByteBuffer? {
        guard outbound.readableBytes > 0 else { return nil }
        let taken = outbound
        lastTakenBytes = taken.readableBytes
        if outbound.capacity > Self.retainedOutboundCapacity {
            outbound = ByteBufferAllocator().buffer(capacity: Self.outboundCapacity)
        } else {
            // Only indices change: `taken` keeps the bytes; the storage is reused once the socket lets go.
            outbound.moveReaderIndex(to: outbound.writerIndex)
        }
        return taken
    }

    fileprivate func read(into pointer: UnsafeMutablePointer<CChar>, count: Int) -> Int {
        guard var buffer = inbound, buffer.readableBytes > 0 else { return 0 }
        inbound = nil
        let copied = min(count, buffer.readableBytes)
        buffer.withUnsafeReadableBytes { source in
            UnsafeMutableRawPointer(pointer).copyMemory(from: source.baseAddress!, byteCount: copied)
        }
        buffer.moveReaderIndex(forwardBy: copied)
        inbound = buffer.readableBytes > 0 ? buffer : nil
        return copied
    }

    fileprivate func write(from pointer: UnsafePointer<CChar>, count: Int) {
        if outbound.readableBytes == 0 {
            // Allocates only while the socket still holds the last write's storage.
            outbound.clear(minimumCapacity: min(max(Self.outboundCapacity, lastTakenBytes), Self.retainedOutboundCapacity))
        }
        outbound.writeBytes(UnsafeRawBufferPointer(start: pointer, count: count))
    }
}

/// The BIO method, created once. `nonisolated(unsafe)`: written only by the global's one-time
/// (thread-safe) initialiser and read-only afterwards; OpenSSL only reads a BIO_METHOD.
nonisolated(unsafe) private let byteBufferBIOMethod: OpaquePointer = {
    guard let method = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "pushline ByteBuffer") else {
        fatalError("BIO_meth_new failed: out of memory")
    }
    BIO_meth_set_write(method, byteBufferBIOWrite)
    BIO_meth_set_read(method, byteBufferBIORead)
    BIO_meth_set_ctrl(method, byteBufferBIOControl)
    BIO_meth_set_create(method, byteBufferBIOCreate)
    BIO_meth_set_destroy(method, byteBufferBIODestroy)
    return method
}()

private func byteBufferBIOTarget(_ bio: OpaquePointer) -> ByteBufferBIO? {
    BIO_get_data(bio).map { Unmanaged<ByteBufferBIO>.fromOpaque($0).takeUnretainedValue() }
}

/// Never blocks: the outbound buffer grows as needed.
private func byteBufferBIOWrite(_ bio: OpaquePointer?, _ data: UnsafePointer<CChar>?, _ length: Int32) -> Int32 {
    guard let bio, let data, length >= 0, let target = byteBufferBIOTarget(bio) else { return -1 }
    pushline_BIO_clear_retry_flags(bio)
    target.write(from: data, count: Int(length))
    return length
}

/// "Retry later" when no ciphertext is queued, which OpenSSL reports as SSL_ERROR_WANT_READ.
private func byteBufferBIORead(_ bio: OpaquePointer?, _ data: UnsafeMutablePointer<CChar>?, _ length: Int32) -> Int32 {
    guard let bio, let data, length >= 0, let target = byteBufferBIOTarget(bio) else { return -1 }
    pushline_BIO_clear_retry_flags(bio)
    let copied = target.read(into: data, count: Int(length))
    guard copied > 0 else {
        pushline_BIO_set_retry_read(bio)
        return -1
    }
    return Int32(copied)
}

private func byteBufferBIOControl(_ bio: OpaquePointer?, _ command: Int32, _ argument: Int, _ pointer: UnsafeMutableRawPointer?) -> Int {
    switch command {
    case BIO_CTRL_FLUSH:
        // Flushing is the handler's job (one socket flush per channel flush); report success.
        return 1
    case BIO_CTRL_GET_CLOSE:
        return Int(BIO_get_shutdown(bio))
    case BIO_CTRL_SET_CLOSE:
        BIO_set_shutdown(bio, Int32(truncatingIfNeeded: argument))
        return 1
    default:
        return 0
    }
}

private func byteBufferBIOCreate(_ bio: OpaquePointer?) -> Int32 {
    BIO_set_init(bio, 1)
    return 1
}

private func byteBufferBIODestroy(_ bio: OpaquePointer?) -> Int32 {
    BIO_set_data(bio, nil)
    return 1
}
