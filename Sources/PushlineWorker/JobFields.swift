import PushlineAPNSCore

/// The top-level members of a job record by name, duplicates refused.
///
/// A job has about ten members: a linear scan over them beats hashing every name into a
/// dictionary, and every record pays for it. Past `linearLimit` members (a sender's own extra
/// fields, or a hostile record) a dictionary keeps lookups and the duplicate check linear.
struct JobFields {
    static let linearLimit = 16

    private let members: [(key: String, value: JSONScanner.Value)]
    private let index: [String: JSONScanner.Value]?

    /// Throws `.duplicateField` naming the first member that repeats.
    init(_ members: [(key: String, value: JSONScanner.Value)]) throws(JobRejection) {
        self.members = members
        if members.count <= Self.linearLimit {
            index = nil
            for later in members.indices.dropFirst() {
                let length = members[later].key.utf8.count
                for earlier in members.indices[..<later]
                where members[earlier].key.utf8.count == length && members[earlier].key == members[later].key {
                    throw JobRejection(.duplicateField, members[later].key)
                }
            }
        } else {
            var index: [String: JSONScanner.Value] = [:]
            index.reserveCapacity(members.count)
            for (key, value) in members {
                guard index.updateValue(value, forKey: key) == nil else {
                    throw JobRejection(.duplicateField, key)
                }
            }
            self.index = index
        }
    }

    subscript(name: String) -> JSONScanner.Value? {
        if let index { return index[name] }
        // Lengths first: most names differ in length, and comparing two Strings costs a call.
        let length = name.utf8.count
        for member in members where member.key.utf8.count == length && member.key == name { return member.value }
        return nil
    }
}
