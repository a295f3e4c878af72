import PushlineAPNSCore

/// The top-level members of a job record by name, duplicates refused, read in one pass with no
/// array of members: each member the decoder reads has a slot of its own, and the others (a
/// sender's own fields) are only checked for duplicates.
///
/// Other members' keys are kept only when there are any (most jobs have none): a linear scan up to
/// `linearLimit` of them, then a set, so a hostile record with thousands of fields stays linear.
struct JobFields {
    static let linearLimit = 16

    /// The members the decoder reads, one stored property per `Slot` case (inline: no
    /// allocation). Not an `InlineArray`: reading an element of one needs the struct's address,
    /// and each read through the decoder copied all 13 values (about 400 bytes) to make one;
    /// a stored property is read alone.
    private var id: JSONScanner.Value?
    private var token: JSONScanner.Value?
    private var tokens: JSONScanner.Value?
    private var channelID: JSONScanner.Value?
    private var app: JSONScanner.Value?
    private var pushType: JSONScanner.Value?
    private var priority: JSONScanner.Value?
    private var expiration: JSONScanner.Value?
    private var collapseID: JSONScanner.Value?
    private var topic: JSONScanner.Value?
    private var payload: JSONScanner.Value?
    private var deadline: JSONScanner.Value?
    private var meta: JSONScanner.Value?
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
    private enum Slot {
        case id, token, tokens, channelID, app, pushType, priority, expiration, collapseID, topic, payload, deadline, meta

        /// By length first: a mismatched `==` on strings is the slow comparison, and every member
        /// of every job comes through here.
        init?(_ name: String) {
            let slot: Slot?
            switch name.utf8.count {
            case 2: slot = name == "id" ? .id : nil
            case 3: slot = name == "app" ? .app : nil
            case 4: slot = name == "meta" ? .meta : nil
            case 5: slot = name == "token" ? .token : name == "topic" ? .topic : nil
            case 6: slot = name == "tokens" ? .tokens : nil
            case 7: slot = name == "payload" ? .payload : nil
            case 8: slot = name == "priority" ? .priority : name == "deadline" ? .deadline : nil
            case 9: slot = name == "push_type" ? .pushType : nil
            case 10: slot = name == "channel_id" ? .channelID : name == "expiration" ? .expiration : nil
            case 11: slot = name == "collapse_id" ? .collapseID : nil
            default: slot = nil
            }
            guard let slot else { return nil }
            self = slot
        }
    }

    private subscript(slot slot: Slot) -> JSONScanner.Value? {
        get {
            switch slot {
            case .id: id
            case .token: token
            case .tokens: tokens
            case .channelID: channelID
            case .app: app
            case .pushType: pushType
            case .priority: priority
            case .expiration: expiration
            case .collapseID: collapseID
            case .topic: topic
            case .payload: payload
            case .deadline: deadline
            case .meta: meta
            }
        }
        set {
            switch slot {
            case .id: id = newValue
            case .token: token = newValue
            case .tokens: tokens = newValue
            case .channelID: channelID = newValue
            case .app: app = newValue
            case .pushType: pushType = newValue
            case .priority: priority = newValue
            case .expiration: expiration = newValue
            case .collapseID: collapseID = newValue
            case .topic: topic = newValue
            case .payload: payload = newValue
            case .deadline: deadline = newValue
            case .meta: meta = newValue
            }
        }
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
        // No closure (`Slot(name).flatMap { self[slot: $0] }`): it captured a copy of the fields.
        guard let slot = Slot(name) else { return nil }
        return self[slot: slot]
    }
}
