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
    private var campaign: JSONScanner.Value?
    private var otherKeys: [String] = []
    private var otherIndex: Set<String>?
    /// The first member that repeats.
    private var duplicate: String?

    /// No members yet (`scan` reads them).
    init() {}

    /// Reads the members of the record `bytes` into this empty value; throws the scanner's error
    /// when it is not one JSON object, and `.duplicateField` naming the first member that
    /// repeats. Filled in place: built by an initializer, the value (about 330 bytes) was copied
    /// three times on its way to the decoder, and its arrays retained and released (about 0.4%
    /// of the worker at one token per job).
    mutating func scan(_ bytes: UnsafeBufferPointer<UInt8>) throws {
        try JSONScanner.forEachMemberKey(bytes) { key, value in add(bytes, key, value) }
        if let duplicate { throw JobRejection(.duplicateField, duplicate) }
    }

    /// The members the decoder reads; the raw value is the member's name.
    enum Slot: String {
        case id, token, tokens, app, topic, payload, priority, deadline, meta, campaign
        case channelID = "channel_id"
        case pushType = "push_type"
        case expiration
        case collapseID = "collapse_id"

        /// A key written without escapes, matched on its bytes (no `String` made): by length
        /// first, then the few names of that length. Every member of every job comes through here.
        init?(utf8 name: UnsafeBufferPointer<UInt8>) {
            let slot: Slot?
            switch name.count {
            case 2: slot = Self.id.matches(name)
            case 3: slot = Self.app.matches(name)
            case 4: slot = Self.meta.matches(name)
            case 5: slot = Self.token.matches(name) ?? Self.topic.matches(name)
            case 6: slot = Self.tokens.matches(name)
            case 7: slot = Self.payload.matches(name)
            case 8: slot = Self.priority.matches(name) ?? Self.deadline.matches(name) ?? Self.campaign.matches(name)
            case 9: slot = Self.pushType.matches(name)
            case 10: slot = Self.channelID.matches(name) ?? Self.expiration.matches(name)
            case 11: slot = Self.collapseID.matches(name)
            default: slot = nil
            }
            guard let slot else { return nil }
            self = slot
        }

        /// A key with escapes, once they are resolved.
        init?(_ name: String) {
            var name = name
            guard let slot = name.withUTF8({ Slot(utf8: $0) }) else { return nil }
            self = slot
        }

        /// Self when `name` spells it. A plain loop: names are at most 11 bytes, and the generic
        /// `elementsEqual` was a call per byte.
        @inline(__always)
        private func matches(_ name: UnsafeBufferPointer<UInt8>) -> Slot? {
            var spelled = rawValue
            let same = spelled.withUTF8 { own in
                guard own.count == name.count else { return false }
                for index in 0..<own.count where own[index] != name[index] { return false }
                return true
            }
            return same ? self : nil
        }
    }

    /// The member in `slot`, if the record has it.
    subscript(slot: Slot) -> JSONScanner.Value? {
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
            case .campaign: campaign
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
            case .campaign: campaign = newValue
            }
        }
    }

    private mutating func add(_ bytes: UnsafeBufferPointer<UInt8>, _ key: JSONScanner.Value, _ value: JSONScanner.Value) {
        guard duplicate == nil else { return }
        let spelled = UnsafeBufferPointer(rebasing: bytes[(key.range.lowerBound + 1)..<(key.range.upperBound - 1)])
        let escaped = spelled.contains(UInt8(ascii: "\\"))
        if !escaped, let slot = Slot(utf8: spelled) {
            fill(slot, value)
            return
        }
        // A sender's own member, or a key written with escapes: named by its decoded text.
        let name = (try? JSONScanner.string(bytes, key)) ?? String(decoding: spelled, as: UTF8.self)
        if escaped, let slot = Slot(name) {
            fill(slot, value)
            return
        }
        addOther(name)
    }

    private mutating func fill(_ slot: Slot, _ value: JSONScanner.Value) {
        if self[slot] != nil { duplicate = slot.rawValue }
        self[slot] = value
    }

    private mutating func addOther(_ key: String) {
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
}
