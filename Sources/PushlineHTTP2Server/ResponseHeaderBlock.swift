import CNGHTTP2

/// Scratch storage for a response's `nghttp2_nv` array: `:status` and pointers straight into an
/// `HTTP2HeaderFields`' storage, so a response's headers are never copied before nghttp2 copies
/// them. Owned by one `HTTP2ServerHandler`; never shared.
struct ResponseHeaderBlock: ~Copyable {
    /// ":status" followed by three digits, rewritten per response.
    private var status: [UInt8] = Array(":status200".utf8)
    /// Allocated in init, reallocated only when a response has more fields than ever before,
    /// freed in deinit.
    private var nv: UnsafeMutablePointer<nghttp2_nv>
    private var nvCapacity: Int

    init() {
        nvCapacity = 16
        nv = .allocate(capacity: nvCapacity)
    }

    deinit { nv.deallocate() }

    /// Calls `body` with an nv array of `:status` and `fields`, pointing into `fields`' storage
    /// (no copy); the pointers are valid only inside `body`.
    mutating func withNVArray<R>(
        status code: Int,
        fields: HTTP2HeaderFields,
        _ body: (UnsafePointer<nghttp2_nv>, Int) throws -> R
    ) rethrows -> R {
        if fields.count + 1 > nvCapacity {
            nv.deallocate()
            nvCapacity = (fields.count + 1) * 2
            nv = .allocate(capacity: nvCapacity)
        }
        // Three ASCII digits without going through String.
        let clamped = min(max(code, 100), 999)
        status[7] = UInt8(48 + clamped / 100)
        status[8] = UInt8(48 + clamped / 10 % 10)
        status[9] = UInt8(48 + clamped % 10)
        let nv = self.nv
        return try status.withUnsafeMutableBufferPointer { status in
            nv[0] = nghttp2_nv(name: status.baseAddress!, value: status.baseAddress! + 7, namelen: 7, valuelen: 3, flags: 0)
            return try fields.withUnsafeFields { fields in
                var count = 1
                if let base = fields.storage.baseAddress {
                    // nghttp2 only reads (and copies) the names and values it is given.
                    let bytes = UnsafeMutablePointer(mutating: base.assumingMemoryBound(to: UInt8.self))
                    fields.forEachRange { name, value, neverIndex in
                        nv[count] = nghttp2_nv(
                            name: bytes + name.lowerBound,
                            value: bytes + value.lowerBound,
                            namelen: name.count,
                            valuelen: value.count,
                            flags: neverIndex ? UInt8(NGHTTP2_NV_FLAG_NO_INDEX.rawValue) : 0
                        )
                        count += 1
                    }
                }
                return try body(UnsafePointer(nv), count)
            }
        }
    }
}
