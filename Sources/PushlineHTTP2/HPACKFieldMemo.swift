/// The field an `HPACKRequestEncoder` last wrote at one position of a request's block, with its
/// coded bytes: the representation's head (an index, or a literal's flags and name) and, for a
/// literal, the coded value. Its arrays keep their storage from request to request.
///
/// What it holds is always one field and its exact coding, never a mix: `head` is the coding of
/// (`name`, `never`) in table `version`; `codedValue` is the coding of `value`; `constantKey`
/// names the constant field (`HTTP2ConstantFields`) whose name and value these are, and is set
/// only here, in the same step that stores that value. A constant field is known by its key
/// alone (`writeIfSame(constantKey:version:into:)`), so a key must never outlive its value: a
/// value written but not remembered clears the key.
struct HPACKFieldMemo {
    private var name: [UInt8] = []
    private var never = false
    /// The dynamic table's version the head was made in; -1: nothing remembered.
    private var version = -1
    /// True when the whole field is `head` (an index): then `value` is the value it names.
    private var indexed = false
    private var head: [UInt8] = []
    /// A literal's value and its coded bytes, when `valueKnown`.
    private var value: [UInt8] = []
    private var codedValue: [UInt8] = []
    private var valueKnown = false
    /// The key of the constant field whose name and value are remembered here; 0: not one.
    private var constantKey: UInt64 = 0
    /// How many times in a row the literal's value was not the one remembered.
    private var changes = 0
    /// After this many changes in a row, a new value is remembered only on every this-many-th
    /// change: `:path` and `apns-id` change on every request, and copying each value and its
    /// coded bytes into the memo was a third of what writing them cost. A value written and not
    /// remembered leaves the memo holding the previous value and its coding (and no constant
    /// key); a field that settles is remembered again within this many requests.
    static let changesBeforeForgetting = 4

    /// Writes the remembered field when it is the constant field `constantKey` (not 0) and the
    /// head is still valid: the field is the same bytes, so none are compared.
    func writeIfSame(constantKey: UInt64, version: Int, into writer: inout HPACKWriter) -> Bool {
        guard constantKey != 0, constantKey == self.constantKey, version == self.version else { return false }
        writer.write(head)
        if !indexed { writer.write(codedValue) }
        return true
    }

    /// Writes the field when it is the one remembered, or a never-indexed literal of it whose
    /// value alone differs (then the value is coded in place, and remembered unless it keeps
    /// changing); false when the field must be decided anew. `constantKey`: the field's key when
    /// it is a constant field (0 otherwise), remembered with its value.
    mutating func writeIfSame(
        name: UnsafeRawBufferPointer,
        value: UnsafeRawBufferPointer,
        never: Bool,
        version: Int,
        constantKey: UInt64,
        into writer: inout HPACKWriter
    ) -> Bool {
        guard version == self.version, never == self.never, self.name.hasSameBytes(as: name) else { return false }
        if indexed {
            guard valueKnown, self.value.hasSameBytes(as: value) else { return false }
            self.constantKey = constantKey
            writer.write(head)
            return true
        }
        // Only a never-indexed literal is written the same way whatever its value: any other
        // field with another value may be an index or indexed incrementally (nghttp2's choice).
        guard never || (valueKnown && self.value.hasSameBytes(as: value)) else { return false }
        writer.write(head)
        writeValue(value, constantKey: constantKey, into: &writer)
        return true
    }

    /// Remembers a literal whose head (flags and name) the encoder decided, and writes it.
    mutating func writeLiteral(
        name: UnsafeRawBufferPointer,
        value: UnsafeRawBufferPointer,
        never: Bool,
        version: Int,
        constantKey: UInt64,
        into writer: inout HPACKWriter,
        head writeHead: (inout HPACKWriter) -> Void
    ) {
        remember(name: name, never: never, version: version, indexed: false, bound: name.count, head: writeHead)
        writer.write(head)
        writeValue(value, constantKey: constantKey, into: &writer)
    }

    /// Remembers a field written as an index, and writes it.
    mutating func writeIndexed(
        name: UnsafeRawBufferPointer,
        value: UnsafeRawBufferPointer,
        version: Int,
        index: Int,
        constantKey: UInt64,
        into writer: inout HPACKWriter
    ) {
        remember(name: name, never: false, version: version, indexed: true, bound: 0) { $0.writeInteger(index, prefix: 7, flags: 0x80) }
        Self.replace(&self.value, with: value)
        valueKnown = true
        self.constantKey = constantKey
        writer.write(head)
    }

    /// Nothing is remembered: the next field at this position is decided anew.
    mutating func forget() {
        version = -1
        valueKnown = false
        constantKey = 0
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
        valueKnown = false
        constantKey = 0
        self.never = never
        self.version = version
        self.indexed = indexed
        HPACKWriter.write(into: &head, bound: bound + HPACKWriter.overheadPerField, writeHead)
    }

    /// The remembered coded value when the value is the same; else the value coded in place, then
    /// remembered with its coded bytes and `constantKey`, unless it keeps changing: then the memo
    /// keeps the previous value and its coding, and no key.
    private mutating func writeValue(_ value: UnsafeRawBufferPointer, constantKey: UInt64, into writer: inout HPACKWriter) {
        if valueKnown && self.value.hasSameBytes(as: value) {
            changes = 0
            self.constantKey = constantKey
            writer.write(codedValue)
            return
        }
        let coded = writer.writeString(value)
        changes += 1
        guard !valueKnown || changes < Self.changesBeforeForgetting || changes % Self.changesBeforeForgetting == 0 else {
            self.constantKey = 0
            return
        }
        Self.replace(&self.value, with: value)
        Self.replace(&codedValue, with: coded)
        valueKnown = true
        self.constantKey = constantKey
    }

    private static func replace(_ stored: inout [UInt8], with bytes: UnsafeRawBufferPointer) {
        stored.removeAll(keepingCapacity: true)
        stored.append(contentsOf: bytes)
    }
}
