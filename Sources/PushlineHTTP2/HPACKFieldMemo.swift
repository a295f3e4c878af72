/// The field an `HPACKRequestEncoder` last wrote at one position of a request's block, with its
/// coded bytes: the representation's head (an index, or a literal's flags and name) and, for a
/// literal, the coded value. Its arrays keep their storage from request to request.
struct HPACKFieldMemo {
    private var name: [UInt8] = []
    private var never = false
    /// The dynamic table's version the head was made in; -1: nothing remembered.
    private var version = -1
    /// True when the whole field is `head` (an index): then `value` is the value it names.
    private var indexed = false
    private var head: [UInt8] = []
    private var value: [UInt8] = []
    private var codedValue: [UInt8] = []
    /// The key of the constant field remembered here (`HTTP2ConstantFields`); 0: not one.
    var constantKey: UInt64 = 0
    /// How many times in a row the literal's value was not the one remembered.
    private var changes = 0
    /// After this many changes in a row, a new value is remembered only on every this-many-th
    /// change: `:path` and `apns-id` change on every request, and copying each value and its
    /// coded bytes into the memo was a third of what writing them cost. The remembered pair stays
    /// one value and its coding, so a match is always right; a field that settles is remembered
    /// again within this many requests.
    static let changesBeforeForgetting = 4

    /// Writes the remembered field when it is the constant field `constantKey` and the head is
    /// still valid: the field is the same bytes, so none are compared.
    mutating func writeIfSame(constantKey: UInt64, version: Int, into writer: inout HPACKWriter) -> Bool {
        guard constantKey == self.constantKey, version == self.version else { return false }
        writer.write(head)
        if !indexed { writer.write(codedValue) }
        return true
    }

    /// Writes the field when it is the one remembered, or a literal of it whose value alone
    /// differs (then the value is coded in place and remembered); false when the field must be
    /// decided anew.
    mutating func writeIfSame(
        name: UnsafeRawBufferPointer,
        value: UnsafeRawBufferPointer,
        never: Bool,
        version: Int,
        into writer: inout HPACKWriter
    ) -> Bool {
        guard version == self.version, never == self.never, self.name.hasSameBytes(as: name) else { return false }
        if indexed {
            guard self.value.hasSameBytes(as: value) else { return false }
            writer.write(head)
            return true
        }
        writer.write(head)
        writeValue(value, into: &writer)
        return true
    }

    /// Remembers a literal whose head (flags and name) the encoder decided, and writes it.
    mutating func writeLiteral(
        name: UnsafeRawBufferPointer,
        value: UnsafeRawBufferPointer,
        never: Bool,
        version: Int,
        into writer: inout HPACKWriter,
        head writeHead: (inout HPACKWriter) -> Void
    ) {
        remember(name: name, never: never, version: version, indexed: false, bound: name.count, head: writeHead)
        self.value.removeAll(keepingCapacity: true)
        codedValue.removeAll(keepingCapacity: true)
        writer.write(head)
        writeValue(value, into: &writer)
    }

    /// Remembers a field written as an index, and writes it.
    mutating func writeIndexed(
        name: UnsafeRawBufferPointer,
        value: UnsafeRawBufferPointer,
        version: Int,
        index: Int,
        into writer: inout HPACKWriter
    ) {
        remember(name: name, never: false, version: version, indexed: true, bound: 0) { $0.writeInteger(index, prefix: 7, flags: 0x80) }
        Self.replace(&self.value, with: value)
        writer.write(head)
    }

    private mutating func remember(
        name: UnsafeRawBufferPointer,
        never: Bool,
        version: Int,
        indexed: Bool,
        bound: Int,
        head writeHead: (inout HPACKWriter) -> Void
    ) {
        Self.replace(&self.name, with: name)
        changes = 0
        self.never = never
        self.version = version
        self.indexed = indexed
        HPACKWriter.write(into: &head, bound: bound + HPACKWriter.overheadPerField, writeHead)
    }

    /// The remembered coded value when the value is the same; else the value coded in place, then
    /// remembered with its coded bytes.
    private mutating func writeValue(_ value: UnsafeRawBufferPointer, into writer: inout HPACKWriter) {
        if self.value.hasSameBytes(as: value) && !(value.isEmpty && codedValue.isEmpty) {
            changes = 0
            writer.write(codedValue)
            return
        }
        let coded = writer.writeString(value)
        changes += 1
        guard changes < Self.changesBeforeForgetting || changes % Self.changesBeforeForgetting == 0 else { return }
        Self.replace(&self.value, with: value)
        Self.replace(&codedValue, with: coded)
    }

    private static func replace(_ stored: inout [UInt8], with bytes: UnsafeRawBufferPointer) {
        stored.removeAll(keepingCapacity: true)
        stored.append(contentsOf: bytes)
    }
}
