import Foundation
import PushlineAPNSCore
import PushlineTestSupport
import Testing

@testable import PushlineWorker

/// Job fields that become request headers (`collapse_id`, `topic`, `channel_id`) are refused at
/// decoding when HTTP/2 would call the request malformed (RFC 9113 §8.2.1): the server would reset
/// the stream or close the connection, so such a job is `invalid_field`, like any other bad job.
@Suite struct JobHeaderFieldTests {
    let decoder = JobDecoder(bundleIDs: ["default": "com.example.app"])
    let token = String(repeating: "ab", count: 32)
    let channel = "dHN0LXNyY2gtY2hubA=="

    /// A job with `field` set to `value` (written with JSON escapes): a broadcast for `channel_id`,
    /// a push to one token otherwise.
    func record(_ field: String, _ value: String) -> [UInt8] {
        let recipient = field == "channel_id" ? "" : #""token":"\#(token)","#
        return Array(#"{"id":"j1",\#(recipient)"\#(field)":"\#(value)","payload":{}}"#.utf8)
    }

    func detail(_ field: String, _ value: String) -> String? {
        guard case .failure(let rejection) = decoder.decode(record(field, value)) else { return nil }
        #expect(rejection.code == .invalidField)
        #expect(rejection.jobID == "j1", "the rejected record names the job")
        return rejection.detail
    }

    /// The same malformed values, refused in each field with the same words.
    @Test(arguments: ["collapse_id", "topic", "channel_id"])
    func malformedValuesAreRejectedWithTheirReason(field: String) {
        let cases: [(json: String, reason: String)] = [
            (#" c1"#, "starts with whitespace"),
            (#"c1 "#, "ends with whitespace"),
            (#"\tc1"#, "starts with whitespace"),
            (#"c1\t"#, "ends with whitespace"),
            (#"c\u00001"#, "holds a control character (NUL)"),
            (#"c1\r"#, "holds a control character (CR)"),
            (#"c\n1"#, "holds a control character (LF)"),
            (#"c1\r\nx-injected: 1"#, "holds a control character (CR)"),
            (#"c\u001b1"#, "holds a control character (0x1B)"),
            ("c\u{7F}1", "holds a control character (DEL)"),
        ]
        for (json, reason) in cases {
            #expect(detail(field, json) == "\(field): \(reason)", "\(field): \(json)")
        }
    }

    @Test func innerWhitespaceIsAllowedWhereAHeaderAllowsIt() throws {
        for (json, value) in [("a b", "a b"), (#"a\tb"#, "a\tb"), ("a  b", "a  b")] {
            #expect(try decoder.decode(record("collapse_id", json)).get().collapseID == value)
            #expect(try decoder.decode(record("topic", json)).get().topic == value)
        }
        // A channel id is base64: no whitespace anywhere, as before.
        #expect(detail("channel_id", "a b")?.hasPrefix("channel_id: 'a b' is not printable ASCII") == true)
    }

    @Test func collapseIDIsAtMost64BytesAndNotEmpty() throws {
        let longest = String(repeating: "c", count: 64)
        #expect(try decoder.decode(record("collapse_id", longest)).get().collapseID == longest)
        #expect(detail("collapse_id", longest + "c") == "collapse_id: 65 bytes, at most 64")
        // 32 two-byte characters are 64 bytes; one more byte is too many.
        let accented = String(repeating: "é", count: 32)
        #expect(try decoder.decode(record("collapse_id", accented)).get().collapseID == accented)
        #expect(detail("collapse_id", accented + "c") == "collapse_id: 65 bytes, at most 64")
        #expect(detail("collapse_id", "") == "collapse_id: empty; leave it out (or null) for none")
        // Null is absent, as for every optional member.
        let absent = try decoder.decode(Array(#"{"id":"j1","token":"\#(token)","collapse_id":null,"payload":{}}"#.utf8)).get()
        #expect(absent.collapseID == nil)
    }

    @Test func topicIsNotEmpty() {
        #expect(detail("topic", "") == "topic: empty")
    }

    @Test func validJobsStillDecode() throws {
        let push = try decoder.decode(
            Array(
                #"{"id":"j1","token":"\#(token)","topic":"com.example.app.voip","push_type":"voip","collapse_id":"c1","payload":{}}"#.utf8
            )
        ).get()
        #expect(push.topic == "com.example.app.voip" && push.collapseID == "c1")
        let defaulted = try decoder.decode(Array(#"{"id":"j2","token":"\#(token)","payload":{}}"#.utf8)).get()
        #expect(defaulted.topic == "com.example.app" && defaulted.collapseID == nil)
        let broadcast = try decoder.decode(record("channel_id", channel)).get()
        #expect(broadcast.channelID == channel)
    }

    /// The rejection reaches the `rejected` record and the dead-letter header as `<code>: <detail>`.
    @Test func theRejectedRecordCarriesTheReason() {
        guard case .failure(let rejection) = decoder.decode(record("collapse_id", "c1 ")) else {
            Issue.record("accepted a collapse_id ending with a space")
            return
        }
        #expect(rejection.description == "invalid_field: collapse_id: ends with whitespace")
    }
}

/// A configured bundle id becomes every push's default `apns-topic` and the path of every
/// broadcast: one HTTP/2 would refuse fails the configuration at start-up, with the key named.
@Suite struct BundleIDConfigurationTests {
    func problems(bundleID: String) async throws -> [String] {
        let directory = try ProjectPaths.temporaryDirectory("pushline-bundle")
        defer { try? FileManager.default.removeItem(at: directory) }
        let key = directory.appendingPathComponent("AuthKey.p8").path
        try "key".write(toFile: key, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: key)
        let file = directory.appendingPathComponent("config.yaml").path
        let yaml = """
            apps:
              default:
                bundle_id: "\(bundleID)"
                auth: {type: "token", key_file: "\(key)", key_id: "K", team_id: "T"}
              other:
                bundle_id: "com.example.other"
                auth: {type: "token", key_file: "\(key)", key_id: "K", team_id: "T"}
            """
        try yaml.write(toFile: file, atomically: true, encoding: .utf8)
        do {
            _ = try await ConfigurationLoader.load(file: file, environment: [:])
            return []
        } catch let problems as ConfigurationProblems {
            return problems.problems
        }
    }

    @Test func aBundleIDThatWouldMakeRequestsMalformedFailsAtStartUp() async throws {
        // YAML escapes in a double-quoted string: \t, \r, \n and \0 are the characters.
        let cases: [(yaml: String, line: String)] = [
            (
                "com.example.app ",
                "apps.default.bundle_id: 'com.example.app ' ends with whitespace; "
                    + "it is sent as the apns-topic header, where HTTP/2 forbids that: correct the bundle id"
            ),
            (
                #"\tcom.example.app"#,
                #"apps.default.bundle_id: '\tcom.example.app' starts with whitespace; "#
                    + "it is sent as the apns-topic header, where HTTP/2 forbids that: correct the bundle id"
            ),
            (
                #"com.example.app\r"#,
                #"apps.default.bundle_id: 'com.example.app\r' holds a control character (CR); "#
                    + "it is sent as the apns-topic header, where HTTP/2 forbids that: correct the bundle id"
            ),
            (
                #"com.exa\nmple"#,
                #"apps.default.bundle_id: 'com.exa\nmple' holds a control character (LF); "#
                    + "it is sent as the apns-topic header, where HTTP/2 forbids that: correct the bundle id"
            ),
            (
                #"com\0.example"#,
                #"apps.default.bundle_id: 'com\0.example' holds a control character (NUL); "#
                    + "it is sent as the apns-topic header, where HTTP/2 forbids that: correct the bundle id"
            ),
            (
                "com.example app",
                "apps.default.bundle_id: 'com.example app' holds whitespace; "
                    + "it is sent in the :path of broadcasts, where HTTP/2 forbids that: correct the bundle id"
            ),
        ]
        for (yaml, line) in cases {
            #expect(try await problems(bundleID: yaml) == [line], "\(yaml)")
        }
    }

    @Test func ordinaryBundleIDsPass() async throws {
        for bundleID in ["com.example.app", "com.apple.mgmt.External.0a1b2c3d-0000-4000-8000-123456789abc", "A1-b.c"] {
            #expect(try await problems(bundleID: bundleID) == [], "\(bundleID)")
        }
        // Blank is the key's own rule, reported once.
        #expect(try await problems(bundleID: " ") == ["apps.default.bundle_id: empty"])
    }
}
