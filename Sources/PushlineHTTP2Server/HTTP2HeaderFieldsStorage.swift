/// The bytes of an `HTTP2HeaderFields`: one heap block owned by this object, allocated in init,
/// grown by `reserve`, freed in deinit.
///
/// `@unchecked Sendable`: `HTTP2HeaderFields` writes only to a uniquely referenced storage (copy
/// on write), so a storage reachable from more than one value — the only way one can cross
/// threads — is never written again. Its properties are `@exclusivity(unchecked)` for the same
/// reason: every mutation happens on a storage one value owns, never overlapping a read.
@usableFromInline
final class HTTP2HeaderFieldsStorage: @unchecked Sendable {
    @usableFromInline @exclusivity(unchecked) private(set) var bytes: UnsafeMutableRawPointer
    /// Bytes in use, from `bytes`.
    @usableFromInline @exclusivity(unchecked) var used = 0
    @exclusivity(unchecked) private(set) var capacity: Int

    init(capacity: Int) {
        self.capacity = max(capacity, 16)
        bytes = .allocate(byteCount: self.capacity, alignment: 8)
    }

    deinit { bytes.deallocate() }

    /// A copy with room for at least `minimumCapacity` bytes.
    func copy(minimumCapacity: Int) -> HTTP2HeaderFieldsStorage {
        let copy = HTTP2HeaderFieldsStorage(capacity: max(capacity, minimumCapacity))
        copy.bytes.copyMemory(from: bytes, byteCount: used)
        copy.used = used
        return copy
    }

    /// Makes room for `count` more bytes (doubling).
    func reserve(_ count: Int) {
        guard used + count > capacity else { return }
        var newCapacity = capacity * 2
        while newCapacity < used + count { newCapacity *= 2 }
        let grown = UnsafeMutableRawPointer.allocate(byteCount: newCapacity, alignment: 8)
        grown.copyMemory(from: bytes, byteCount: used)
        bytes.deallocate()
        bytes = grown
        capacity = newCapacity
    }

    /// The bytes in use; valid while this storage is alive and not written.
    @inlinable var readable: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: bytes, count: used)
    }
}
