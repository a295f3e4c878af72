import PushlineAPNSCore

/// A delivery record's `apns_id`: APNs' answer or a caller's text, or the request's own id in its
/// job's block of ids, written into the record's bytes without a `String` per token. Equal to
/// (and hashed like) the text it stands for.
enum RecordAPNSID: Sendable, Hashable {
    case text(String)
    case block(APNSIDBlock, index: Int)

    var text: String {
        switch self {
        case .text(let text): text
        case .block(let block, let index): block.id(at: index)
        }
    }

    /// The bytes it writes (36 for a block's id).
    var length: Int {
        switch self {
        case .text(let text): text.utf8.count
        case .block: 36
        }
    }

    static func == (lhs: RecordAPNSID, rhs: RecordAPNSID) -> Bool {
        lhs.text == rhs.text
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(text)
    }
}
