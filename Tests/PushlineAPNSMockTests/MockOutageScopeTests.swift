import PushlineAPNSCore
import PushlineHTTP2
import PushlineHTTP2Server
import Testing

@testable import PushlineAPNSMock

/// The outage's scope as a value: header fields in, covered or not out; no server.
@Suite struct MockOutageScopeTests {
    static let device = "/3/device/" + String(repeating: "ab", count: 32)

    /// A well-formed provider token of `keyID` (its signature is not checked here).
    static func bearer(_ keyID: String, iat: Int64 = 1_800_000_000) throws -> String {
        "bearer " + (try ProviderToken(keyID: keyID, teamID: "DEF123GHIJ", issuedAt: iat) { _ in [UInt8](repeating: 7, count: 64) }.jwt)
    }

    func covers(
        _ scope: inout MockOutageScope,
        path: String = device,
        topic: String? = nil,
        authorization: String? = nil,
        certificate: String? = nil
    ) -> Bool {
        var headers = [HTTP2Header(":method", "POST"), HTTP2Header(":path", path)]
        if let topic { headers.append(HTTP2Header("apns-topic", topic)) }
        if let authorization { headers.append(HTTP2Header("authorization", authorization, neverIndex: true)) }
        return HTTP2HeaderFields(headers).withUnsafeFields { scope.covers($0, certificateBundleID: certificate) }
    }

    @Test func withoutAScopeEveryRequestIsCovered() {
        var scope = MockOutageScope(MockConfiguration())
        #expect(scope.coversEverything)
        #expect(covers(&scope))
        #expect(covers(&scope, path: "/nowhere", topic: "anything"))
    }

    @Test func aTopicCoversItselfAndWhatStartsWithItAndADot() {
        var scope = MockOutageScope(topic: "com.example.b", keyID: nil)
        #expect(!scope.coversEverything)
        for topic in ["com.example.b", "com.example.b.voip", "com.example.b.push-type.liveactivity", "com.example.b.complication"] {
            #expect(covers(&scope, topic: topic), "\(topic)")
        }
        for topic in ["com.example.a", "com.example.bc", "com.example.b-voip", "com.example", "", "xcom.example.b"] {
            #expect(!covers(&scope, topic: topic), "\(topic)")
        }
        #expect(!covers(&scope), "a push without apns-topic and without a client certificate names no app")
    }

    @Test func withoutApnsTopicTheAppIsTheCertificatesOrThePaths() {
        var scope = MockOutageScope(topic: "com.example.b", keyID: nil)
        #expect(covers(&scope, certificate: "com.example.b"))
        #expect(!covers(&scope, certificate: "com.example.a"))
        #expect(covers(&scope, topic: "com.example.a", certificate: "com.example.b") == false, "the header wins for a push")
        #expect(covers(&scope, path: "/4/broadcasts/apps/com.example.b"))
        #expect(!covers(&scope, path: "/4/broadcasts/apps/com.example.a"))
        #expect(covers(&scope, path: "/1/apps/com.example.b/channels"))
        #expect(
            covers(&scope, path: "/1/apps/com.example.b/all-channels", topic: "com.example.a"),
            "the path names a channel request's app"
        )
        #expect(!covers(&scope, path: "/1/apps/com.example.a/channels"))
        #expect(!covers(&scope, path: "/1/apps/com.example.b/elsewhere"), "no route, no app")
    }

    @Test func aKeyIDCoversTheTokensOfThatKeyOnly() throws {
        var scope = MockOutageScope(topic: nil, keyID: "KEYB000002")
        #expect(covers(&scope, authorization: try Self.bearer("KEYB000002")))
        #expect(covers(&scope, authorization: try Self.bearer("KEYB000002").replacingOccurrences(of: "bearer", with: "Bearer")))
        #expect(!covers(&scope, authorization: try Self.bearer("KEYA000001")))
        #expect(!covers(&scope), "no token, no key")
        for bad in ["", "bearer ", "bearer not.a.jwt", "basic abc", try Self.bearer("KEYB000002").dropFirst(7).description] {
            #expect(!covers(&scope, authorization: bad), "\(bad)")
        }
        #expect(covers(&scope, path: "/4/broadcasts/apps/com.example.a", authorization: try Self.bearer("KEYB000002")))
    }

    @Test func aTokenIsReadOnceAndANewOneIsReadAgain() throws {
        var scope = MockOutageScope(topic: nil, keyID: "KEYB000002")
        let b = try Self.bearer("KEYB000002")
        let a = try Self.bearer("KEYA000001")
        let laterB = try Self.bearer("KEYB000002", iat: 1_800_001_200)
        #expect(covers(&scope, authorization: b))
        #expect(covers(&scope, authorization: b), "the same token, the same answer")
        #expect(!covers(&scope, authorization: a))
        #expect(!covers(&scope, authorization: a))
        #expect(covers(&scope, authorization: laterB))
        #expect(!covers(&scope, authorization: "bearer garbage"))
        #expect(covers(&scope, authorization: b))
    }

    @Test func topicAndKeyIDMustBothMatch() throws {
        var scope = MockOutageScope(topic: "com.example.b", keyID: "KEYB000002")
        #expect(covers(&scope, topic: "com.example.b.voip", authorization: try Self.bearer("KEYB000002")))
        #expect(!covers(&scope, topic: "com.example.a", authorization: try Self.bearer("KEYB000002")))
        #expect(!covers(&scope, topic: "com.example.b", authorization: try Self.bearer("KEYA000001")))
        #expect(!covers(&scope, topic: "com.example.b"))
    }

    @Test func theKeyIDIsReadFromTheJWTHeader() throws {
        func keyID(_ header: String) -> String? {
            var header = header
            return header.withUTF8 { MockOutageScope.keyID(ofAuthorization: UnsafeRawBufferPointer($0)) }
        }
        #expect(keyID(try Self.bearer("KEYB000002")) == "KEYB000002")
        #expect(keyID("BEARER " + String(try Self.bearer("KEYA000001").dropFirst(7))) == "KEYA000001")
        #expect(keyID("bearer") == nil)
        #expect(keyID("bearer a.b.c") == nil)
    }

    // MARK: Flags

    func configuration(
        topic: String? = nil,
        keyID: String? = nil,
        seconds: Double = 10,
        keys: [String] = ["KEYA000001"]
    )
        -> MockConfiguration
    {
        var configuration = MockConfiguration()
        configuration.outageSeconds = seconds
        configuration.outageTopic = topic
        configuration.outageKeyID = keyID
        for key in keys { configuration.authKeys[key] = .init(keyID: key, teamID: "DEF123GHIJ", publicKeyPEM: "") }
        return configuration
    }

    @Test func goodScopesHaveNoProblems() {
        #expect(MockConfiguration().outageScopeProblems.isEmpty)
        #expect(configuration().outageScopeProblems.isEmpty)
        #expect(configuration(topic: "com.example.b").outageScopeProblems.isEmpty)
        #expect(configuration(topic: "com.example.b.push-type.liveactivity").outageScopeProblems.isEmpty)
        #expect(configuration(topic: "com.example_b-2", keys: []).outageScopeProblems.isEmpty)
        #expect(configuration(keyID: "KEYA000001").outageScopeProblems.isEmpty)
        #expect(configuration(topic: "com.example.b", keyID: "KEYA000001").outageScopeProblems.isEmpty)
    }

    @Test func badScopesSayWhichFlagAndWhy() {
        func problems(_ configuration: MockConfiguration) -> String { configuration.outageScopeProblems.joined(separator: "\n") }
        #expect(problems(configuration(topic: "")).contains("--outage-topic: empty"))
        for bad in ["com example", ".com.example", "com.example.", "com..example", "com.example/b", "com.exämple"] {
            #expect(problems(configuration(topic: bad)).contains("--outage-topic: '\(bad)' is not an apns-topic"), "\(bad)")
        }
        #expect(problems(configuration(keyID: "")).contains("--outage-key-id: empty"))
        #expect(problems(configuration(keyID: "KEYB000002", keys: [])).contains("needs token auth"))
        #expect(
            problems(configuration(keyID: "KEYB000002", keys: ["KEYA000001", "KEYC000003"]))
                .contains("'KEYB000002' is not the key id of any --auth-key (known: KEYA000001, KEYC000003)")
        )
        #expect(problems(configuration(topic: "com.example.b", seconds: 0)).contains("there is none"))
        #expect(problems(configuration(keyID: "KEYA000001", seconds: 0)).contains("there is none"))
        #expect(configuration(topic: "", keyID: "", seconds: 0).outageScopeProblems.count == 3, "each problem on its own line")
    }
}
