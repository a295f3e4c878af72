import CNGHTTP2

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The allocator a client session gives nghttp2 (`nghttp2_mem`): small blocks are kept on
/// per-size free lists and handed back at once, instead of going through `malloc` and `free` for
/// the seven or so short-lived allocations nghttp2 makes per request (the outbound item, the
/// copied header pairs, the stream, the received header values and their buffers). Measured with
/// jemalloc's counters in the APNs client benchmark: 7.4 of its 11.9 allocation requests per
/// notification were nghttp2's.
///
/// The lists grow to the session's peak (blocks of at most 2 KiB per stream in flight) and are
/// freed with the pool. Owns every block it ever allocated that is on a free list, and frees them
/// in deinit; blocks nghttp2 still holds are freed by nghttp2 (through `free` here) when the
/// session is deleted, which its owner does before releasing the pool. Used only by that
/// session, on its EventLoop.
final class NGHTTP2MemoryPool {
    /// Block payloads are multiples of `step` up to `classes * step`; larger ones are plain mallocs.
    private static let step = 64
    private static let classes = 32
    /// In front of each payload: the size class (or `large`) and the payload capacity. 16 bytes
    /// keep the payload as aligned as malloc's.
    private static let headerSize = 16
    private static let large = UInt64.max

    /// The first free block (header address) per size class, most recently freed first; each
    /// free block's payload starts with the address of the next. Allocated in init, freed (with
    /// every block on the lists) in deinit.
    private let heads: UnsafeMutablePointer<UnsafeMutableRawPointer?>

    init() {
        heads = .allocate(capacity: Self.classes)
        heads.initialize(repeating: nil, count: Self.classes)
    }

    deinit {
        for sizeClass in 0..<Self.classes {
            var next = heads[sizeClass]
            while let block = next {
                next = (block + Self.headerSize).load(as: UnsafeMutableRawPointer?.self)
                free(block)
            }
        }
        heads.deallocate()
    }

    /// The `nghttp2_mem` to pass to `nghttp2_session_*_new3`; valid while this pool is alive.
    var mem: nghttp2_mem {
        nghttp2_mem(
            mem_user_data: Unmanaged.passUnretained(self).toOpaque(),
            malloc: poolMalloc,
            free: poolFree,
            calloc: poolCalloc,
            realloc: poolRealloc
        )
    }

    func allocate(_ size: Int) -> UnsafeMutableRawPointer? {
        let sizeClass = max(size - 1, 0) / Self.step
        if sizeClass < Self.classes {
            if let block = heads[sizeClass] {
                heads[sizeClass] = (block + Self.headerSize).load(as: UnsafeMutableRawPointer?.self)
                return block + Self.headerSize
            }
            let capacity = (sizeClass + 1) * Self.step
            guard let block = malloc(Self.headerSize + capacity) else { return nil }
            block.storeBytes(of: UInt64(sizeClass), as: UInt64.self)
            block.storeBytes(of: UInt64(capacity), toByteOffset: 8, as: UInt64.self)
            return block + Self.headerSize
        }
        guard let block = malloc(Self.headerSize + size) else { return nil }
        block.storeBytes(of: Self.large, as: UInt64.self)
        block.storeBytes(of: UInt64(size), toByteOffset: 8, as: UInt64.self)
        return block + Self.headerSize
    }

    func deallocate(_ pointer: UnsafeMutableRawPointer?) {
        guard let pointer else { return }
        let block = pointer - Self.headerSize
        let sizeClass = block.load(as: UInt64.self)
        if sizeClass == Self.large {
            free(block)
        } else {
            pointer.storeBytes(of: heads[Int(sizeClass)], as: UnsafeMutableRawPointer?.self)
            heads[Int(sizeClass)] = block
        }
    }

    func reallocate(_ pointer: UnsafeMutableRawPointer?, _ size: Int) -> UnsafeMutableRawPointer? {
        guard let pointer else { return allocate(size) }
        let capacity = Int((pointer - Self.headerSize).load(fromByteOffset: 8, as: UInt64.self))
        if size <= capacity, (pointer - Self.headerSize).load(as: UInt64.self) != Self.large { return pointer }
        guard let grown = allocate(size) else { return nil }
        grown.copyMemory(from: pointer, byteCount: min(capacity, size))
        deallocate(pointer)
        return grown
    }
}

@available(*, unavailable)
extension NGHTTP2MemoryPool: Sendable {}

// nghttp2's allocator callbacks: the pool arrives unretained as `mem_user_data`.

private func pool(_ userData: UnsafeMutableRawPointer?) -> Unmanaged<NGHTTP2MemoryPool> {
    Unmanaged<NGHTTP2MemoryPool>.fromOpaque(userData!)
}

private func poolMalloc(_ size: Int, _ userData: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    pool(userData)._withUnsafeGuaranteedRef { $0.allocate(size) }
}

private func poolFree(_ pointer: UnsafeMutableRawPointer?, _ userData: UnsafeMutableRawPointer?) {
    pool(userData)._withUnsafeGuaranteedRef { $0.deallocate(pointer) }
}

private func poolCalloc(_ count: Int, _ size: Int, _ userData: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    let (total, overflow) = count.multipliedReportingOverflow(by: size)
    if overflow { return nil }
    let pointer = pool(userData)._withUnsafeGuaranteedRef { $0.allocate(total) }
    pointer?.initializeMemory(as: UInt8.self, repeating: 0, count: total)
    return pointer
}

private func poolRealloc(_ pointer: UnsafeMutableRawPointer?, _ size: Int, _ userData: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer?
{
    pool(userData)._withUnsafeGuaranteedRef { $0.reallocate(pointer, size) }
}
