import PushlineAPNSCore

@testable import PushlineHTTP2

/// A seeded random stream of APNs requests on one connection, made of parts as `PooledConnection`
/// writes them into a session's header block: constant fields (`HTTP2ConstantFields`: the
/// pseudo-headers, the provider token, a batch's fields before and after the id, remade as
/// `SharedHeaderFields` remakes them: a new instance whenever a batch's values differ from the
/// last, so values come back under new keys) and fields of the request's own bytes.
///
/// Jobs alternate between the shared path (constant groups around the id) and the one-by-one path
/// (every regular field a field of its own). Groups change now and then and come back; a job's
/// expiration and collapse id are its own, shared with other jobs, or absent, or, on the shared
/// path, each request's own after the constant groups (a run of single-token jobs, each with the
/// collapse id derived from its job's id: `APNSNotificationBatch.collapseIDs`); ids change on
/// every request (or repeat now and then); the token rotates; the first request of a connection
/// indexes its id, expiration and collapse id (Apple's rule).
struct RandomRequestSequence {
    /// One piece of a request's block.
    enum Part {
        case constants(HTTP2ConstantFields, [ReferenceField])
        case field(ReferenceField)
    }

    private var random: SplitMix64
    private let pseudoHeaders: HTTP2ConstantFields
    private let pseudoFields: [ReferenceField]
    private let tokenAuth: Bool
    private var token: (fields: HTTP2ConstantFields, reference: [ReferenceField])
    private var tokenNumber = 0
    private var job = Job()
    private var jobNumber: Int
    private var firstOnConnection = true
    /// As `SharedHeaderFields` keeps them: the last groups made, reused while the values stay.
    private var leading: (values: [String], fields: HTTP2ConstantFields)?
    private var trailing: (values: [String?], first: Bool, fields: HTTP2ConstantFields?)?
    private var lastID = "00000000-0000-4000-8000-000000000000"

    private struct Job {
        var remaining = 0
        var shared = true
        var pushType = "alert"
        var topic = "com.example.app"
        var priority = "10"
        var expiration: String?
        var collapseID: String?
        /// On the shared path: each request has its own collapse id (or none), `collapseID` is unused.
        var collapseEach = false
    }

    init(seed: UInt64, firstJob: Int) {
        random = SplitMix64(seed: seed)
        jobNumber = firstJob
        let authority = ["api.push.apple.com", "api.sandbox.push.apple.com", "127.0.0.1:2197"][Int(random.next() % 3)]
        let pseudo: [(name: String, value: String, neverIndex: Bool)] = [
            (":method", "POST", false), (":scheme", "https", false), (":authority", authority, true),
        ]
        pseudoHeaders = HTTP2ConstantFields(pseudo)
        pseudoFields = pseudo.map { ReferenceField($0.name, $0.value, neverIndex: $0.neverIndex) }
        tokenAuth = random.next() % 5 != 0
        token = Self.makeToken(0)
    }

    /// The next request's parts, in block order.
    mutating func next() -> [Part] {
        if job.remaining == 0 { startJob() }
        job.remaining -= 1
        if random.next() % 3000 == 0 {
            tokenNumber += 1
            token = Self.makeToken(tokenNumber)
        }
        let first = firstOnConnection
        firstOnConnection = false
        var parts: [Part] = [.constants(pseudoHeaders, pseudoFields)]
        parts.append(.field(ReferenceField(":path", "/3/device/" + hex(bytes: 32), neverIndex: true)))
        if tokenAuth { parts.append(.constants(token.fields, token.reference)) }
        let id = random.next() % 10 == 0 ? lastID : uuid()
        lastID = id
        let before = [("apns-push-type", job.pushType), ("apns-topic", job.topic), ("apns-priority", job.priority)]
        var after: [(String, String)] = []
        if let expiration = job.expiration { after.append(("apns-expiration", expiration)) }
        // A request's own collapse id: its job's id (each request is a job of its own), its hash
        // as the worker derives one, or none.
        var ownCollapseID: String?
        if job.shared && job.collapseEach {
            ownCollapseID = chance(5) ? nil : chance(2) ? "pl-" + hex(bytes: 16) : "job-\(jobNumber)-\(job.remaining)"
        } else if let collapseID = job.collapseID {
            after.append(("apns-collapse-id", collapseID))
        }
        guard job.shared else {
            for (name, value) in before { parts.append(.field(ReferenceField(name, value, neverIndex: true))) }
            parts.append(.field(ReferenceField("apns-id", id, neverIndex: !first)))
            for (name, value) in after { parts.append(.field(ReferenceField(name, value, neverIndex: !first))) }
            return parts
        }
        let leadingValues = before.map(\.1)
        if leading?.values != leadingValues {
            leading = (leadingValues, HTTP2ConstantFields(before.map { ($0.0, $0.1, true) }))
        }
        let trailingValues = [job.expiration, job.collapseEach ? nil : job.collapseID]
        if trailing?.values != trailingValues || trailing?.first != first {
            trailing = (trailingValues, first, after.isEmpty ? nil : HTTP2ConstantFields(after.map { ($0.0, $0.1, !first) }))
        }
        parts.append(.constants(leading!.fields, before.map { ReferenceField($0.0, $0.1, neverIndex: true) }))
        parts.append(.field(ReferenceField("apns-id", id, neverIndex: !first)))
        if let fields = trailing!.fields {
            parts.append(.constants(fields, after.map { ReferenceField($0.0, $0.1, neverIndex: !first) }))
        }
        if let ownCollapseID { parts.append(.field(ReferenceField("apns-collapse-id", ownCollapseID, neverIndex: !first))) }
        return parts
    }

    /// A job: a run of requests with one set of regular values, each changed from the last job's
    /// with some chance (so groups persist for a few jobs, and old values come back).
    private mutating func startJob() {
        jobNumber += 1
        job.remaining = 1 + Int(random.next() % 3 == 0 ? random.next() % 40 : random.next() % 4)
        job.shared = random.next() % 4 != 0
        job.collapseEach = chance(4)
        if chance(2) { job.pushType = pick(["alert", "background", "voip", "liveactivity", "location"]) }
        if chance(3) { job.topic = pick(["com.example.app", "com.example.app.voip", "com.example.other"]) }
        if chance(2) { job.priority = pick(["10", "5", "1"]) }
        if chance(2) {
            switch random.next() % 4 {
            case 0: job.expiration = nil
            case 1: job.expiration = pick(["0", "1700000000", "1700000123"])
            default: job.expiration = String(2_000_000_000 + jobNumber)
            }
        }
        if chance(2) {
            switch random.next() % 5 {
            case 0: job.collapseID = nil
            case 1: job.collapseID = pick(["score", "story-1", "x"])
            case 2: job.collapseID = printable(length: 1 + Int(random.next() % 64))
            default: job.collapseID = "c-\(jobNumber)"
            }
        }
    }

    private static func makeToken(_ number: Int) -> (fields: HTTP2ConstantFields, reference: [ReferenceField]) {
        let value = "bearer eyJhbGciOiJFUzI1NiIsImtpZCI6IkFCQzEyMyJ9.\(number).signature-\(number * 7919)"
        return (HTTP2ConstantFields([("authorization", value, true)]), [ReferenceField("authorization", value, neverIndex: true)])
    }

    private mutating func chance(_ oneIn: UInt64) -> Bool { random.next() % oneIn == 0 }

    private mutating func pick(_ values: [String]) -> String { values[Int(random.next() % UInt64(values.count))] }

    private mutating func hex(bytes: Int) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        for _ in 0..<bytes {
            let byte = random.next()
            text.append(digits[Int(byte & 15)])
            text.append(digits[Int(byte >> 4 & 15)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    private mutating func uuid() -> String {
        let text = Array(hex(bytes: 16).uppercased().utf8)
        return [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(decoding: text[$0], as: UTF8.self) }.joined(separator: "-")
    }

    /// Visible ASCII with inner spaces, as a field value may hold (RFC 9113, section 8.2.1).
    private mutating func printable(length: Int) -> String {
        var text = (0..<length).map { _ in UInt8(0x21 + random.next() % 94) }
        if length > 2 { text[Int(random.next() % UInt64(length - 2)) + 1] = 0x20 }
        return String(decoding: text, as: UTF8.self)
    }
}
