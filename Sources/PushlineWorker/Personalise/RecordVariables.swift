import PushlineAPNSCore

/// The `vars` of a job's object tokens as the decoder finds them: where each one's key and value
/// are in the record's bytes, valid while the decoder reads the record. `table` keeps those the
/// template reads (`TokenVariables`).
///
/// Rules (the decoder's): `vars` is an object of at most `maxBytes` bytes as written, or null;
/// each key is a variable name (`PayloadTemplate.isName`, written without escapes), once per
/// token; each value a string, number, boolean or null (null: no value, as if absent).
struct RecordVariables {
    /// The most bytes a token's `vars` object may take, as written.
    static let maxBytes = 1024

    struct Entry {
        var token: Int32
        var keyStart: Int32
        var keyEnd: Int32
        var valueStart: Int32
        /// -1: null.
        var valueEnd: Int32
    }

    private(set) var entries: [Entry] = []

    /// Reads token `token`'s `vars` object `value` (a `.object` of `bytes`); throws a rejection
    /// naming the problem (`tokens[i].vars...`).
    mutating func read(_ bytes: UnsafeBufferPointer<UInt8>, _ value: JSONScanner.Value, token: Int) throws(JobRejection) {
        guard value.range.count <= Self.maxBytes else {
            throw JobRejection(.invalidField, "tokens[\(token)].vars: \(value.range.count) bytes, at most \(Self.maxBytes)")
        }
        let first = entries.count
        let base = value.range.lowerBound
        let object = UnsafeBufferPointer(rebasing: bytes[value.range])
        var problem: JobRejection?
        do {
            try JSONScanner.forEachMemberKey(object) { key, member in
                guard problem == nil else { return }
                let name = UnsafeBufferPointer(rebasing: object[(key.range.lowerBound + 1)..<(key.range.upperBound - 1)])
                guard PayloadTemplate.isName(name) else {
                    let text = String(decoding: name, as: UTF8.self)
                    problem = JobRejection(
                        .invalidField,
                        "tokens[\(token)].vars: '\(text)' is not a variable name (1...\(PayloadTemplate.maxNameBytes) of A-Z a-z 0-9 _)"
                    )
                    return
                }
                let keyStart = Int32(base + key.range.lowerBound + 1)
                let keyEnd = Int32(base + key.range.upperBound - 1)
                let valueStart: Int
                let valueEnd: Int
                switch member.kind {
                case .string:
                    valueStart = base + member.range.lowerBound + 1
                    valueEnd = base + member.range.upperBound - 1
                case .number, .bool:
                    valueStart = base + member.range.lowerBound
                    valueEnd = base + member.range.upperBound
                case .null:
                    valueStart = 0
                    valueEnd = -1
                case .object, .array:
                    problem = JobRejection(
                        .invalidField,
                        "tokens[\(token)].vars.\(String(decoding: name, as: UTF8.self)): \(member.kind == .object ? "an object" : "an array"); a variable is a string, number, boolean or null"
                    )
                    return
                }
                for earlier in entries[first...] where Self.same(bytes, earlier, keyStart, keyEnd) {
                    problem = JobRejection(.duplicateField, "tokens[\(token)].vars.\(String(decoding: name, as: UTF8.self))")
                    return
                }
                entries.append(
                    Entry(token: Int32(token), keyStart: keyStart, keyEnd: keyEnd, valueStart: Int32(valueStart), valueEnd: Int32(valueEnd))
                )
            }
        } catch {
            // The record's scan validated it already.
            throw JobRejection(.invalidField, "tokens[\(token)].vars: \(error)")
        }
        if let problem { throw problem }
    }

    private static func same(_ bytes: UnsafeBufferPointer<UInt8>, _ entry: Entry, _ start: Int32, _ end: Int32) -> Bool {
        guard entry.keyEnd - entry.keyStart == end - start else { return false }
        for offset in 0..<Int(end - start) where bytes[Int(entry.keyStart) + offset] != bytes[Int(start) + offset] {
            return false
        }
        return true
    }

    /// The values `template` reads, per token (`tokens` rows), copied out of `bytes`.
    func table(_ bytes: UnsafeBufferPointer<UInt8>, template: PayloadTemplate, tokens: Int) -> TokenVariables {
        let names = template.names.count
        guard !entries.isEmpty else { return TokenVariables(tokens: tokens, names: names) }
        var cells = [Int32](repeating: -1, count: tokens * names * 2)
        var values: [UInt8] = []
        for entry in entries where entry.valueEnd >= 0 {
            let key = UnsafeBufferPointer(rebasing: bytes[Int(entry.keyStart)..<Int(entry.keyEnd)])
            guard let name = template.names.firstIndex(where: { $0.elementsEqual(key) }) else { continue }
            if values.isEmpty { values.reserveCapacity(entries.count * 8) }
            let cell = (Int(entry.token) * names + name) * 2
            cells[cell] = Int32(values.count)
            values.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[Int(entry.valueStart)..<Int(entry.valueEnd)]))
            cells[cell + 1] = Int32(values.count)
        }
        return TokenVariables(tokens: tokens, names: names, values: values, cells: cells)
    }
}
