import Testing

@testable import PushlineHTTP2

@Suite struct HTTP2ResponseHeadersTests {
    static let fields = [
        HTTP2Header("apns-id", "8d1b5c3e-4f2a-4b6c-9d7e-0a1b2c3d4e5f", neverIndex: true),
        HTTP2Header("x-empty", ""),
        HTTP2Header("apns-unique-id", "0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9"),
        HTTP2Header("apns-id", "a second one, never returned"),
        HTTP2Header("x-long", String(repeating: "v", count: 70_000)),
    ]

    @Test func keepsEveryFieldInOrder() {
        let headers = HTTP2ResponseHeaders(Self.fields)
        #expect(headers.fields == Self.fields)
        #expect(Array(headers) == Self.fields)
        #expect(!headers.isEmpty && HTTP2ResponseHeaders().isEmpty)
        #expect(headers == HTTP2ResponseHeaders(Self.fields))
    }

    @Test func findsTheFirstFieldByName() {
        let headers = HTTP2ResponseHeaders(Self.fields)
        #expect(headers.first(named: "apns-id") == "8d1b5c3e-4f2a-4b6c-9d7e-0a1b2c3d4e5f")
        #expect(headers.first(named: "apns-unique-id") == "0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9")
        #expect(headers.first(named: "x-empty") == "")
        #expect(headers.first(named: "x-long")?.utf8.count == 70_000)
        #expect(headers.first(named: "apns") == nil)
        #expect(headers.first(named: "x-missing") == nil)
        #expect(HTTP2ResponseHeaders().first(named: "apns-id") == nil)
    }

    @Test func handsBackTheKnownStringOnlyWhenTheBytesAreEqual() {
        let headers = HTTP2ResponseHeaders(Self.fields)
        let known = "8d1b5c3e-4f2a-4b6c-9d7e-0a1b2c3d4e5f"
        #expect(headers.first(named: "apns-id", reusing: known) == known)
        #expect(headers.first(named: "apns-id", reusing: "8d1b5c3e-4f2a-4b6c-9d7e-0a1b2c3d4e50") == known)
        #expect(headers.first(named: "apns-id", reusing: "8d1b5c3e") == known)
        #expect(headers.first(named: "x-missing", reusing: known) == nil)
    }
}
