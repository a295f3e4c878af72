import CNGHTTP2

/// A header field as the reference coders take and give it.
struct ReferenceField: Equatable, CustomStringConvertible {
    var name: [UInt8]
    var value: [UInt8]
    var neverIndex: Bool

    init(name: [UInt8], value: [UInt8], neverIndex: Bool) {
        self.name = name
        self.value = value
        self.neverIndex = neverIndex
    }

    init(_ name: String, _ value: String, neverIndex: Bool) {
        self.init(name: Array(name.utf8), value: Array(value.utf8), neverIndex: neverIndex)
    }

    var description: String {
        "\(String(decoding: name, as: UTF8.self)): \(String(decoding: value, as: UTF8.self))\(neverIndex ? " (never indexed)" : "")"
    }
}

/// nghttp2's HPACK decoder (`nghttp2_hd_inflate_*`), one per connection: an implementation of
/// RFC 7541 independent of ours, that the request encoder's blocks are decoded with. Owns its
/// inflater.
final class NGHTTP2Inflater {
    private var inflater: OpaquePointer?

    init() {
        precondition(nghttp2_hd_inflate_new(&inflater) == 0, "nghttp2_hd_inflate_new")
    }

    deinit {
        nghttp2_hd_inflate_del(inflater)
    }

    /// The fields of one whole header block, in order, or nghttp2's error code.
    func decode(_ block: [UInt8]) -> Result<[ReferenceField], DecodeError> {
        var fields: [ReferenceField] = []
        var offset = 0
        while true {
            var nv = nghttp2_nv()
            var flags: Int32 = 0
            let used = block.withUnsafeBufferPointer { bytes in
                nghttp2_hd_inflate_hd2(inflater, &nv, &flags, bytes.baseAddress.map { $0 + offset }, bytes.count - offset, 1)
            }
            guard used >= 0 else { return .failure(DecodeError(code: used, fieldsBefore: fields.count)) }
            offset += used
            if flags & Int32(NGHTTP2_HD_INFLATE_EMIT.rawValue) != 0 {
                fields.append(
                    ReferenceField(
                        name: Array(UnsafeBufferPointer(start: nv.name, count: nv.namelen)),
                        value: Array(UnsafeBufferPointer(start: nv.value, count: nv.valuelen)),
                        neverIndex: nv.flags & UInt8(NGHTTP2_NV_FLAG_NO_INDEX.rawValue) != 0
                    )
                )
            }
            if flags & Int32(NGHTTP2_HD_INFLATE_FINAL.rawValue) != 0 {
                nghttp2_hd_inflate_end_headers(inflater)
                return .success(fields)
            }
            if used == 0 && offset >= block.count { return .failure(DecodeError(code: 0, fieldsBefore: fields.count)) }
        }
    }

    /// Entries of the decoder's table, the static table's 61 included.
    var tableEntries: Int { nghttp2_hd_inflate_get_num_table_entries(inflater) }

    struct DecodeError: Error, Equatable {
        var code: Int
        var fieldsBefore: Int
    }
}

/// nghttp2's HPACK encoder (`nghttp2_hd_deflate_*`): the representations the request encoder
/// must choose, byte for byte. Owns its deflater.
final class NGHTTP2Deflater {
    private var deflater: OpaquePointer?

    init() {
        precondition(nghttp2_hd_deflate_new(&deflater, 4096) == 0, "nghttp2_hd_deflate_new")
    }

    deinit {
        nghttp2_hd_deflate_del(deflater)
    }

    /// A dynamic table size update goes ahead of the next block.
    func changeTableSize(_ size: Int) {
        precondition(nghttp2_hd_deflate_change_table_size(deflater, size) == 0, "nghttp2_hd_deflate_change_table_size")
    }

    /// Entries of the encoder's table, the static table's 61 included.
    var tableEntries: Int { nghttp2_hd_deflate_get_num_table_entries(deflater) }

    /// The block for `fields`, size updates first.
    func deflate(_ fields: [ReferenceField]) -> [UInt8] {
        var nva: [nghttp2_nv] = []
        nva.reserveCapacity(fields.count)
        var storage: [UnsafeMutablePointer<UInt8>] = []
        defer { storage.forEach { $0.deallocate() } }
        func copy(_ bytes: [UInt8]) -> UnsafeMutablePointer<UInt8> {
            let pointer = UnsafeMutablePointer<UInt8>.allocate(capacity: max(bytes.count, 1))
            pointer.initialize(from: bytes, count: bytes.count)
            storage.append(pointer)
            return pointer
        }
        for field in fields {
            nva.append(
                nghttp2_nv(
                    name: copy(field.name),
                    value: copy(field.value),
                    namelen: field.name.count,
                    valuelen: field.value.count,
                    flags: field.neverIndex ? UInt8(NGHTTP2_NV_FLAG_NO_INDEX.rawValue) : 0
                )
            )
        }
        let bound = nghttp2_hd_deflate_bound(deflater, nva, nva.count)
        var output = [UInt8](repeating: 0, count: bound)
        let count = nghttp2_hd_deflate_hd(deflater, &output, output.count, nva, nva.count)
        precondition(count >= 0, "nghttp2_hd_deflate_hd: \(count)")
        return Array(output[..<count])
    }
}
