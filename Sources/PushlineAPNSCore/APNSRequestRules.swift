/// APNs' request rules, as a pure function: what APNs answers to a malformed request.
///
/// The mock server applies these; the worker's job decoder refuses a job these limits would refuse
/// (`maxCollapseIDBytes` here, `APNSPushType.maxPayloadBytes`), and the tests check that what
/// `APNSRequestHeaders` builds passes `check`: one table for the client and the mock.
/// Authentication (JWT or client certificate) is checked by the caller, which knows the credentials.
public enum APNSRequestRules {
    /// The longest `apns-collapse-id` APNs accepts, in bytes (longer: 400 BadCollapseId).
    public static let maxCollapseIDBytes = 64

    /// A request that passed every rule: what the server needs to answer it.
    public struct Accepted: Sendable, Hashable {
        public var deviceToken: String
        public var topic: String?
        public var pushType: APNSPushType
        public var apnsID: String?
        public var authorization: String?
    }

    /// A rule that failed: APNs' status and reason.
    public struct Rejection: Swift.Error, Sendable, Hashable {
        public var status: Int
        public var reason: APNSReason
        public init(_ status: Int, _ reason: APNSReason) {
            self.status = status
            self.reason = reason
        }
    }

    /// Applies every rule except authentication, in the order APNs evaluates them.
    ///
    /// - Parameters:
    ///   - headers: regular headers (lowercase names), repeats included, pseudo-headers excluded.
    ///   - body: the request body.
    public static func check(
        method: String,
        path: String,
        headers: [(name: String, value: String)],
        body: UnsafeBufferPointer<UInt8>
    ) -> Result<Accepted, Rejection> {
        // The byte rules below are the one table; this copies the values they read into one
        // buffer so they can be handed over as bytes, and keeps the Strings for `Accepted`.
        var storage: [UInt8] = []
        var located: [(field: Field, index: Int, range: Range<Int>)] = []
        for (index, header) in headers.enumerated() {
            guard let field = Field(name: header.name) else { continue }
            let start = storage.count
            storage.append(contentsOf: header.value.utf8)
            located.append((field, index, start..<storage.count))
        }
        var method = method
        var path = path
        let checked = storage.withUnsafeBytes { raw in
            var fields = Fields()
            for entry in located { fields.add(entry.field, value: UnsafeRawBufferPointer(rebasing: raw[entry.range])) }
            return method.withUTF8 { method in
                path.withUTF8 { path in
                    check(method: UnsafeRawBufferPointer(method), path: UnsafeRawBufferPointer(path), fields: fields, body: body)
                }
            }
        }
        switch checked {
        case .failure(let rejection):
            return .failure(rejection)
        case .success(let pushType):
            func value(_ field: Field) -> String? {
                located.first { $0.field == field }.map { headers[$0.index].value }
            }
            return .success(
                Accepted(
                    deviceToken: String(path.dropFirst(devicePathPrefix.count)),
                    topic: value(.topic),
                    pushType: pushType,
                    apnsID: value(.apnsID),
                    authorization: value(.authorization)
                )
            )
        }
    }

    /// The headers the rules read.
    public enum Field: Int, Sendable, CaseIterable {
        case authorization, pushType, apnsID, expiration, priority, topic, collapseID

        /// The header's (lowercase) name.
        public var name: String { utf8Name.description }

        private var utf8Name: StaticString {
            switch self {
            case .authorization: "authorization"
            case .pushType: "apns-push-type"
            case .apnsID: "apns-id"
            case .expiration: "apns-expiration"
            case .priority: "apns-priority"
            case .topic: "apns-topic"
            case .collapseID: "apns-collapse-id"
            }
        }

        /// The field a header name (exact, lowercase bytes) is, if the rules read it.
        public init?(name: UnsafeRawBufferPointer) {
            // The length narrows the candidates to one (or two) compares per header.
            let candidate: Field
            switch name.count {
            case 7: candidate = .apnsID
            case 10: candidate = .topic
            case 13: candidate = name[1] == UInt8(ascii: "u") ? .authorization : .priority
            case 14: candidate = .pushType
            case 15: candidate = .expiration
            case 16: candidate = .collapseID
            default: return nil
            }
            guard equal(name, candidate.utf8Name) else { return nil }
            self = candidate
        }

        init?(name: String) {
            var name = name
            guard let field = name.withUTF8({ Field(name: UnsafeRawBufferPointer($0)) }) else { return nil }
            self = field
        }
    }

    /// The values of the headers the rules read, as bytes that stay valid while the caller's
    /// storage does (the caller collects them with `add`, then calls `check` in the same scope).
    public struct Fields {
        private var authorization, pushType, apnsID, expiration, priority, topic, collapseID: UnsafeRawBufferPointer?
        /// One of the fields came more than once.
        public private(set) var duplicate = false

        public init() {}

        /// Records a header: fields the rules read are kept, others ignored.
        public mutating func add(name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) {
            if let field = Field(name: name) { add(field, value: value) }
        }

        mutating func add(_ field: Field, value: UnsafeRawBufferPointer) {
            if self[field] != nil { duplicate = true }
            switch field {
            case .authorization: authorization = value
            case .pushType: pushType = value
            case .apnsID: apnsID = value
            case .expiration: expiration = value
            case .priority: priority = value
            case .topic: topic = value
            case .collapseID: collapseID = value
            }
        }

        /// The value of `field`; nil when absent.
        public subscript(field: Field) -> UnsafeRawBufferPointer? {
            switch field {
            case .authorization: authorization
            case .pushType: pushType
            case .apnsID: apnsID
            case .expiration: expiration
            case .priority: priority
            case .topic: topic
            case .collapseID: collapseID
            }
        }
    }

    static let devicePathPrefix = "/3/device/"

    /// `check` over bytes: the same rules in the same order, with no `String` made. `path` after
    /// "/3/device/" is the device token. Returns the push type of an accepted request.
    public static func check(
        method: UnsafeRawBufferPointer,
        path: UnsafeRawBufferPointer,
        fields: Fields,
        body: UnsafeBufferPointer<UInt8>
    ) -> Result<APNSPushType, Rejection> {
        guard equal(method, "POST") else { return .failure(Rejection(405, .methodNotAllowed)) }
        guard let token = deviceToken(inPath: path) else { return .failure(Rejection(404, .badPath)) }
        if token.isEmpty { return .failure(Rejection(400, .missingDeviceToken)) }
        guard DeviceToken.isValid(utf8: token) else { return .failure(Rejection(400, .badDeviceToken)) }
        if fields.duplicate { return .failure(Rejection(400, .duplicateHeaders)) }

        var pushType = APNSPushType.alert
        if let raw = fields[.pushType] {
            // Push types are short: the String is inline, and the parse is exactly the String one.
            guard let parsed = APNSPushType(rawValue: String(decoding: raw, as: UTF8.self)) else {
                return .failure(Rejection(400, .invalidPushType))
            }
            pushType = parsed
        }
        if let raw = fields[.priority] {
            guard let parsed = decimal(raw).flatMap({ Int(exactly: $0) }).flatMap(APNSPriority.init(rawValue:)) else {
                return .failure(Rejection(400, .badPriority))
            }
            if !pushType.allows(parsed) {
                return .failure(Rejection(400, .badPriority))
            }
        }
        if let raw = fields[.expiration] {
            guard let value = decimal(raw), value >= 0 else {
                return .failure(Rejection(400, .badExpirationDate))
            }
        }
        if let raw = fields[.apnsID], !isCanonicalUUID(utf8: raw) {
            return .failure(Rejection(400, .badMessageId))
        }
        if let raw = fields[.collapseID], raw.count > maxCollapseIDBytes {
            return .failure(Rejection(400, .badCollapseId))
        }
        if let topic = fields[.topic], topic.isEmpty {
            return .failure(Rejection(400, .badTopic))
        }

        if body.isEmpty { return .failure(Rejection(400, .payloadEmpty)) }
        if body.count > pushType.maxPayloadBytes { return .failure(Rejection(413, .payloadTooLarge)) }
        do {
            let value = try JSONScanner.validate(body)
            if value.kind != .object { return .failure(Rejection(400, .other("BadPayload"))) }
        } catch {
            return .failure(Rejection(400, .other("BadPayload")))
        }
        return .success(pushType)
    }

    /// The bytes after "/3/device/" in `path`; nil when `path` does not start with it. Matches
    /// `String.hasPrefix` (which compares characters): a non-ASCII byte right after the prefix may
    /// be a combining mark that joins the final "/", so that case is decided by `String`.
    public static func deviceToken(inPath path: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        let prefix: StaticString = "/3/device/"
        let count = prefix.utf8CodeUnitCount
        guard path.count >= count, equal(UnsafeRawBufferPointer(rebasing: path[..<count]), prefix) else { return nil }
        if path.count > count, path[count] >= 0x80,
            !String(decoding: path, as: UTF8.self).hasPrefix(devicePathPrefix)
        {
            return nil
        }
        return UnsafeRawBufferPointer(rebasing: path[count...])
    }

    /// Whether `bytes` are exactly `text`'s UTF-8.
    static func equal(_ bytes: UnsafeRawBufferPointer, _ text: StaticString) -> Bool {
        let count = text.utf8CodeUnitCount
        guard bytes.count == count else { return false }
        // A plain index loop: `elementsEqual` iterated generically and showed in profiles.
        let expected = text.utf8Start
        for index in 0..<count where bytes[index] != expected[index] { return false }
        return true
    }

    /// Parses a decimal integer as `Int64(String)` does: an optional sign, then one or more ASCII
    /// digits, nil on anything else or on overflow.
    static func decimal(_ bytes: UnsafeRawBufferPointer) -> Int64? {
        var index = 0
        var negative = false
        if let first = bytes.first, first == UInt8(ascii: "+") || first == UInt8(ascii: "-") {
            negative = first == UInt8(ascii: "-")
            index = 1
        }
        guard index < bytes.count else { return nil }
        var value: Int64 = 0
        while index < bytes.count {
            let digit = bytes[index] &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            let (shifted, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (next, overflow2) =
                negative ? shifted.subtractingReportingOverflow(Int64(digit)) : shifted.addingReportingOverflow(Int64(digit))
            if overflow1 || overflow2 { return nil }
            value = next
            index += 1
        }
        return value
    }

    /// Whether `text` is a UUID in 8-4-4-4-12 hex form (APNs asks for lowercase; either case is
    /// accepted, as APNs does).
    public static func isCanonicalUUID(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { isCanonicalUUID(utf8: UnsafeRawBufferPointer($0)) }
    }

    /// `isCanonicalUUID` over UTF-8 bytes.
    public static func isCanonicalUUID(utf8: UnsafeRawBufferPointer) -> Bool {
        guard utf8.count == 36 else { return false }
        for (index, byte) in utf8.enumerated() {
            switch index {
            case 8, 13, 18, 23:
                if byte != UInt8(ascii: "-") { return false }
            default:
                if !DeviceToken.isHexDigit(byte) { return false }
            }
        }
        return true
    }
}
