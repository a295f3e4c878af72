import Testing

@testable import PushlineAPNSCore

/// What may be sent as an HTTP/2 field value (RFC 9113 §8.2.1, RFC 9110 §5.5): the reasons
/// people read, and every short value over an alphabet of the bytes that matter against the
/// grammar written out here.
@Suite struct HTTPFieldValueTests {
    @Test func namesEachProblem() {
        let cases: [(String, String?)] = [
            ("c1", nil),
            ("a b", nil),
            ("a\tb", nil),
            ("", nil),
            ("é-ü", nil),
            ("c1 ", "ends with whitespace"),
            (" c1", "starts with whitespace"),
            ("\tc1", "starts with whitespace"),
            ("c1\t", "ends with whitespace"),
            (" ", "starts with whitespace"),
            ("c\u{0}1", "holds a control character (NUL)"),
            ("c1\r", "holds a control character (CR)"),
            ("c\n1", "holds a control character (LF)"),
            ("c\u{7F}", "holds a control character (DEL)"),
            ("c\u{1B}", "holds a control character (0x1B)"),
            ("\u{1}", "holds a control character (0x01)"),
            // A control character is named before the whitespace around it.
            (" c1\r\n", "holds a control character (CR)"),
        ]
        for (value, reason) in cases {
            #expect(HTTPFieldValue.problem(value)?.description == reason, "\(value.debugDescription)")
        }
    }

    /// RFC 9110's grammar, byte by byte: `field-value = *field-content`, whose characters are
    /// VCHAR, obs-text (0x80-0xFF), SP and HTAB, with no SP or HTAB at either end (RFC 9113).
    static func reference(_ bytes: [UInt8]) -> Bool {
        func isWhitespace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 }
        func isAllowed(_ byte: UInt8) -> Bool { (0x21...0x7E).contains(byte) || byte >= 0x80 || isWhitespace(byte) }
        guard bytes.allSatisfy(isAllowed) else { return false }
        return !(bytes.first.map(isWhitespace) ?? false) && !(bytes.last.map(isWhitespace) ?? false)
    }

    @Test func agreesWithTheGrammarOnEveryByteAndEveryShortValue() {
        for byte in UInt8.min...UInt8.max {
            for value in [[byte], [0x61, byte], [byte, 0x61], [0x61, byte, 0x61]] {
                let problem = value.withUnsafeBytes { HTTPFieldValue.problem(utf8: $0) }
                #expect((problem == nil) == Self.reference(value), "\(value)")
            }
        }
        let alphabet: [UInt8] = [0x00, 0x09, 0x0A, 0x0D, 0x20, 0x61, 0x7F, 0xC3]
        var values: [[UInt8]] = [[]]
        for _ in 0..<4 {
            values = values.flatMap { value in alphabet.map { value + [$0] } }
            for value in values {
                let problem = value.withUnsafeBytes { HTTPFieldValue.problem(utf8: $0) }
                #expect((problem == nil) == Self.reference(value), "\(value)")
            }
        }
    }

    /// The values `APNSRequestHeaders` builds from constants and generated ids pass.
    @Test func builtHeadersPass() {
        let notification = APNSNotification(
            deviceToken: String(repeating: "ab", count: 32),
            topic: "com.example.app.voip",
            pushType: .voip,
            priority: .immediate,
            expiration: 0,
            collapseID: "c 1",
            apnsID: APNSIDGenerator(seed: 3).next(),
            payload: Array(#"{"aps":{}}"#.utf8)
        )
        let fields = APNSRequestHeaders.make(
            for: notification,
            authority: "api.push.apple.com",
            bearerToken: "a.b.c",
            firstOnConnection: true
        )
        for field in fields {
            #expect(HTTPFieldValue.problem(field.value) == nil, "\(field.name): \(field.value.debugDescription)")
        }
    }
}
