import PushlineAPNSCore

/// The top-level members of a job record by name, duplicates refused, read in one pass with no
/// array of members: each member the decoder reads has a slot of its own, and the others (a
/// sender's own fields) are only checked for duplicates.
///
/// Other members' keys are kept only when there are any (most jobs have none): a linear scan up to
/// `linearLimit` of them, then a set, so a hostile record with thousands of fields stays linear.
struct JobFields {
    static let linearLimit = 16

    /// The members the decoder reads, one per `Slot` case, by its raw value (inline: no
    /// allocation).
    private var slots = InlineArray<13, JSONScanner.Value?>(repeating: nil)
    private var otherKeys: [String] = []
    private var otherIndex: Set<String>?
    /// The first member that repeats.
    private var duplicate: String?

    /// Reads the members of the record `bytes`; throws the scanner's error when it is not one JSON
    /// object, and `.duplicateField` naming the first member that repeats.
    init(_ bytes: UnsafeBufferPointer<UInt8>) throws {
        try JSONScanner.forEachMember(bytes) { key, value in add(key, value) }
        if let duplicate { throw JobRejection(.duplicateField, duplicate) }
    }

    /// The members the decoder reads.
    private enum Slot: Int {
        case id, token, tokens, channelID, app, pushType, priority, expiration, collapseID, topic, payload, deadline, meta

        init?(_ name: String) {
            switch name {
            case "id": self = .id
            case "token": self = .token
            case "tokens": self = .tokens
            case "channel_id": self = .channelID
            case "app": self = .app
            case "push_type": self = .pushType
            case "priority": self = .priority
            case "expiration": self = .expiration
            case "collapse_id": self = .collapseID
            case "topic": self = .topic
            case "payload": self = .payload
            case "deadline": self = .deadline
            case "meta": self = .meta
            default: return nil
            }
        }
    }

    private subscript(slot slot: Slot) -> JSONScanner.Value? {
        get { slots[slot.rawValue] }
        set { slots[slot.rawValue] = newValue }
    }

    private mutating func add(_ key: String, _ value: JSONScanner.Value) {
        guard duplicate == nil else { return }
        if let slot = Slot(key) {
            if self[slot: slot] != nil { duplicate = key }
            self[slot: slot] = value
            return
        }
        if otherIndex != nil {
            if otherIndex!.insert(key).inserted == false { duplicate = key }
            return
        }
        let length = key.utf8.count
        if otherKeys.contains(where: { $0.utf8.count == length && $0 == key }) {
            duplicate = key
            return
        }
        otherKeys.append(key)
        if otherKeys.count > Self.linearLimit {
            otherIndex = Set(otherKeys)
            otherKeys = []
        }
    }

    subscript(name: String) -> JSONScanner.Value? {
        Slot(name).flatMap { self[slot: $0] }
    }
}
