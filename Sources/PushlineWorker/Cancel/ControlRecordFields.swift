/// A cancel's value as JSON says it, each field of its one type and no other field
/// (`ControlRecord`, which checks that it names the record's key).
struct ControlRecordFields: Decodable {
    var type: String
    /// `campaign` and/or `job`, by field name.
    var names: [String: String]
    var reason: String?
    var at: Int64

    private struct Field: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    private static let known: Set<String> = ["type", "campaign", "job", "reason", "at"]

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Field.self)
        if let unknown = container.allKeys.first(where: { !Self.known.contains($0.stringValue) }) {
            throw ControlRecord.Malformed("unknown field '\(unknown.stringValue.prefix(64))'")
        }
        type = try container.decode(String.self, forKey: Field(stringValue: "type"))
        names = [:]
        for name in ["campaign", "job"] where container.contains(Field(stringValue: name)) {
            names[name] = try container.decode(String.self, forKey: Field(stringValue: name))
        }
        reason = try container.decodeIfPresent(String.self, forKey: Field(stringValue: "reason"))
        at = try container.decode(Int64.self, forKey: Field(stringValue: "at"))
    }
}
