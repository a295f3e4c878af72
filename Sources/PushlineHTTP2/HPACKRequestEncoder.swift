/// Writes a client's request header blocks (RFC 7541) with the representations nghttp2's deflater
/// chooses for the same fields and flags, but coded once rather than on every request.
///
/// A push gateway sends the same fields on every request of a connection (`:authority`, the
/// provider token, topic, push type, priority); only `:path` and `apns-id` change. nghttp2 has no
/// way to take a finished block, and its deflater Huffman-codes every literal twice per request
/// (a counting pass, then the coding pass): the largest single item of a worker's profile. This
/// encoder remembers, for each position in the block, the last field written there and its coded
/// bytes; when the next request repeats it, the bytes are copied. A changed value is coded once.
///
/// Representations (as nghttp2 decides them, so Apple's rule for `NGHTTP2_NV_FLAG_NO_INDEX`
/// fields holds unchanged):
/// - a never-indexed field (`neverIndex`, `authorization`, a `cookie` under 20 bytes) is a literal
///   never indexed, naming a static entry's name, else a dynamic entry's, else its own;
/// - any other field is an index when the static or dynamic table holds it whole; else a literal
///   without indexing for `:path` and the other fields nghttp2 never indexes, and for entries over
///   three quarters of the table; else a literal with incremental indexing, which the table
///   model records.
///
/// Owned by one session's send path; a value type with no locks.
struct HPACKRequestEncoder {
    private var table = HPACKDynamicTable()
    /// By position in the block: the field last written there.
    private var memos: [HPACKFieldMemo] = []

    /// The dynamic table the peer's decoder holds (tests compare it with nghttp2's).
    var dynamicTable: HPACKDynamicTable { table }

    /// A dynamic table size update went out ahead of the next block (RFC 7541, section 6.3).
    mutating func tableSizeUpdated(to size: Int) {
        table.resize(to: size)
    }

    /// Writes field `position` of a request's block. `constantKey`: the field's key when it is
    /// one of an `HTTP2ConstantFields` (0 otherwise); a constant field written at the same
    /// position before is known by its key alone, with no bytes compared.
    mutating func encode(
        name: UnsafeRawBufferPointer,
        value: UnsafeRawBufferPointer,
        neverIndex: Bool,
        position: Int,
        constantKey: UInt64 = 0,
        into writer: inout HPACKWriter
    ) {
        while memos.count <= position { memos.append(HPACKFieldMemo()) }
        let version = table.version
        if memos[position].writeIfSame(constantKey: constantKey, version: version, into: &writer) {
            return
        }
        let never = neverIndex || Self.isNeverIndexed(name: name, value: value)
        if memos[position].writeIfSame(name: name, value: value, never: never, version: version, constantKey: constantKey, into: &writer) {
            return
        }
        // What follows remembers the field, with its constant key (except for incremental
        // indexing, below).
        if never {
            let nameIndex = HPACKStaticTable.find(name: name, value: nil).nameIndex ?? table.find(name: name, value: nil).nameIndex
            memos[position].writeLiteral(name: name, value: value, never: true, version: version, constantKey: constantKey, into: &writer) {
                Self.writeLiteralHead(flags: 0x10, prefix: 4, nameIndex: nameIndex, name: name, into: &$0)
            }
            return
        }
        let dynamic = table.find(name: name, value: value)
        let isStatic: (nameIndex: Int?, exactIndex: Int?) =
            dynamic.exactIndex == nil ? HPACKStaticTable.find(name: name, value: value) : (nil, nil)
        if let index = dynamic.exactIndex ?? isStatic.exactIndex {
            memos[position].writeIndexed(name: name, value: value, version: version, index: index, constantKey: constantKey, into: &writer)
            return
        }
        // The static table's name first, as nghttp2 searches.
        let nameIndex = isStatic.nameIndex ?? dynamic.nameIndex
        if Self.isNotIndexed(name: name) || HPACKDynamicTable.entrySize(name: name.count, value: value.count) > table.maxSize * 3 / 4 {
            memos[position].writeLiteral(name: name, value: value, never: false, version: version, constantKey: constantKey, into: &writer)
            {
                Self.writeLiteralHead(flags: 0x00, prefix: 4, nameIndex: nameIndex, name: name, into: &$0)
            }
            return
        }
        // Incremental indexing changes the table, so it is not remembered: the next request
        // finds the entry whole and writes its index.
        memos[position].forget()
        Self.writeLiteralHead(flags: 0x40, prefix: 6, nameIndex: nameIndex, name: name, into: &writer)
        writer.writeString(value)
        table.insert(name: name, value: value)
    }

    /// nghttp2 never indexes `authorization`, nor a `cookie` under 20 bytes.
    private static func isNeverIndexed(name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) -> Bool {
        name.hasSameBytes(as: "authorization") || (value.count < 20 && name.hasSameBytes(as: "cookie"))
    }

    /// Fields nghttp2 writes without indexing (they change on nearly every request).
    private static func isNotIndexed(name: UnsafeRawBufferPointer) -> Bool {
        name.hasSameBytes(as: ":path") || name.hasSameBytes(as: "age") || name.hasSameBytes(as: "content-length")
            || name.hasSameBytes(as: "etag")
            || name.hasSameBytes(as: "if-modified-since") || name.hasSameBytes(as: "if-none-match") || name.hasSameBytes(as: "location")
            || name.hasSameBytes(as: "set-cookie")
    }

    /// A literal's first bytes: the representation's flags and the name's index, or a zero index
    /// followed by the name as a string literal.
    private static func writeLiteralHead(
        flags: UInt8,
        prefix: Int,
        nameIndex: Int?,
        name: UnsafeRawBufferPointer,
        into writer: inout HPACKWriter
    ) {
        writer.writeInteger(nameIndex ?? 0, prefix: prefix, flags: flags)
        if nameIndex == nil { writer.writeString(name) }
    }
}
