import Foundation
import PushlineKafka
import PushlineTLS
import PushlineTestSupport
import Testing

/// Broadcast push end to end, as an operator and a sender meet it: `pushline channels` against the
/// mock's channel-management API, broadcast jobs through the embedded broker and the worker, and
/// the records they yield. What Apple answers is written out here, not read from Pushline's tables.
@Suite(.serialized, .timeLimit(.minutes(3))) struct BroadcastEndToEndTests {
    @Test func createBroadcastDeleteThenTheChannelIsGone() async throws {
        let recording = try ProjectPaths.temporaryDirectory("broadcast").appendingPathComponent("requests.jsonl").path
        let harness = try await Harness.start {
            $0.recordFile = recording
            $0.maxChannels = 2
        }
        let config = harness.configPath

        // An operator makes a channel; its id is the one line on standard output.
        let created = try await runPushline(["channels", "create", "--config", config, "--app", "default", "--storage-policy", "1"])
        // It said goodbye: a GOAWAY before it closed its connection.
        try await waitUntil("the channel client's connection closed") { harness.mock.stats.openConnections == 0 }
        #expect(harness.mock.stats.connections == 1)
        #expect(harness.mock.stats.goawaysReceived == 1)
        #expect(created.status == 0, "\(created.stderr)")
        let channel = created.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(!channel.isEmpty && !channel.contains("\n") && channel.utf8.count % 4 == 0, "a base64 id: \(created.stdout)")
        let read = try await runPushline(["channels", "get", "--config", config, "--channel-id", channel])
        #expect(read.status == 0 && read.stdout == "\(channel) message-storage-policy=1\n", "\(read.stdout)\(read.stderr)")

        // A second channel fits the mock's limit of two; a third is Apple's refusal: exit 2, the reason.
        let second = try await runPushline(["channels", "create", "--config", config, "--storage-policy", "0"])
        #expect(second.status == 0, "\(second.stderr)")
        let other = second.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let third = try await runPushline(["channels", "create", "--config", config])
        #expect(third.status == 2)
        #expect(third.stdout.isEmpty)
        #expect(third.stderr.contains("400 CannotCreateChannelConfig"), "\(third.stderr)")
        let listed = try await runPushline(["channels", "list", "--config", config])
        #expect(listed.status == 0 && listed.stdout == "\(channel)\n\(other)\n", "\(listed.stdout)\(listed.stderr)")

        // A broadcast job: one delivery record with the channel in place of a token.
        _ = try await harness.produce(
            [
                Array(
                    #"{"id":"la-1","channel_id":"\#(channel)","priority":5,"payload":{"aps":{"event":"update","content-state":{"score":"1-0"}}}}"#
                        .utf8
                )
            ],
            keys: ["la-1"]
        )
        let worker = try harness.startWorker()
        let first = try await harness.read(Harness.resultsTopic) { records in
            records.map(json).contains { $0["job_id"] as? String == "la-1" }
        }
        let delivered = try #require(first.map(json).first { $0["job_id"] as? String == "la-1" })
        #expect(delivered["type"] as? String == "delivery")
        #expect(delivered["channel_id"] as? String == channel)
        #expect(delivered["token"] == nil)
        #expect(delivered["status"] as? Int == 200, "\(delivered)")
        #expect(delivered["reason"] is NSNull)
        #expect(delivered["final"] as? Bool == true)
        #expect((delivered["apns_unique_id"] as? String)?.count == 36, "broadcast answers carry apns-unique-id")
        #expect((delivered["apns_id"] as? String)?.count == 36)

        // The operator deletes the channel; reading it now is Apple's refusal.
        let deleted = try await runPushline(["channels", "delete", "--config", config, "--channel-id", channel])
        #expect(deleted.status == 0 && deleted.stdout == "\(channel)\n", "\(deleted.stderr)")
        let readAgain = try await runPushline(["channels", "get", "--config", config, "--channel-id", channel])
        #expect(readAgain.status == 2)
        #expect(readAgain.stderr.contains("400 ChannelNotRegistered"), "\(readAgain.stderr)")

        // A broadcast to it now: a final ChannelNotRegistered record, and channel_gone keyed by the
        // channel on the results topic and on the invalidations topic.
        _ = try await harness.produce(
            [Array(#"{"id":"la-2","channel_id":"\#(channel)","payload":{"aps":{"event":"end"}}}"#.utf8)],
            keys: ["la-2"]
        )
        let results = try await harness.read(Harness.resultsTopic) { records in
            let values = records.map(json)
            return values.contains { $0["job_id"] as? String == "la-2" && $0["type"] as? String == "delivery" }
                && values.contains { $0["type"] as? String == "channel_gone" }
        }
        let refused = try #require(results.map(json).first { $0["job_id"] as? String == "la-2" && $0["type"] as? String == "delivery" })
        #expect(refused["channel_id"] as? String == channel)
        #expect(refused["status"] as? Int == 400)
        #expect(refused["reason"] as? String == "ChannelNotRegistered")
        #expect(refused["final"] as? Bool == true)
        #expect(refused["attempts"] as? Int == 1, "final at once: not retried")
        let gone = try #require(results.first { json($0)["type"] as? String == "channel_gone" })
        #expect(gone.key == Array(channel.utf8))
        #expect(
            String(decoding: gone.value, as: UTF8.self)
                == #"{"type":"channel_gone","channel_id":"\#(channel)","app":"default","reason":"ChannelNotRegistered","job_id":"la-2"}"#
        )
        #expect(results.map(json).filter { $0["type"] as? String == "channel_gone" }.count == 1)
        let invalidations = try await harness.read(Harness.invalidationsTopic) { records in
            records.contains { json($0)["type"] as? String == "channel_gone" }
        }
        #expect(invalidations.first?.key == Array(channel.utf8))

        worker.terminate()
        #expect(await worker.waitForExit(timeout: .seconds(40)) == 0)
        let stats = harness.mock.stats
        #expect(stats.broadcasts == 2 && stats.broadcastsDelivered == 1)
        #expect(stats.channelsCreated == 2 && stats.channelsDeleted == 1 && stats.channels == 1)
        await harness.stop()

        // What the mock saw: Apple's broadcast headers, no topic (channel-management requests,
        // recorded too, carry no push type).
        let lines = try String(contentsOfFile: recording, encoding: .utf8).split(separator: "\n")
        let broadcasts = lines.compactMap { line -> [String: String]? in
            let entry = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            let headers = entry?["headers"] as? [String: String]
            return headers?["apns-push-type"] == nil ? nil : headers
        }
        #expect(broadcasts.count == 2)
        for headers in broadcasts {
            #expect(headers["apns-channel-id"] == channel)
            #expect(headers["apns-push-type"] == "liveactivity")
            #expect(headers["apns-expiration"] == "0", "no expiration in the job: 0")
            #expect(headers["apns-request-id"]?.count == 36)
            #expect(headers["apns-topic"] == nil && headers["apns-id"] == nil)
            // Apple refuses a collapse id on a broadcast: none derived (`worker.collapse_duplicates` is on).
            #expect(headers["apns-collapse-id"] == nil)
        }
        #expect(broadcasts.first?["apns-priority"] == "5")
        #expect(broadcasts.last?["apns-priority"] == "10")
    }

    /// `pushline mock-apns --max-channels 1` (the binary and its flag), and `pushline channels`
    /// meeting the limit: exit 2 with Apple's reason; nothing for the worker or the broker.
    @Test func theChannelLimitFlagMakesAppleRefuseTheSecondChannel() async throws {
        let directory = try ProjectPaths.temporaryDirectory("channel-limit")
        let key = directory.appendingPathComponent("AuthKey.p8").path
        let publicKey = directory.appendingPathComponent("AuthKey.pub.pem").path
        let signing = try PrivateKey.generateP256()
        try signing.writePEM(to: key)
        try signing.publicKeyPEM().write(toFile: publicKey, atomically: true, encoding: .utf8)
        let mock = Process()
        mock.executableURL = WorkerProcess.binary
        mock.arguments = [
            "mock-apns", "--listen", "127.0.0.1:0", "--self-signed", directory.appendingPathComponent("tls").path,
            "--auth-key", "ABC123DEFG:DEF123GHIJ:\(publicKey)", "--topic", "com.example.app", "--max-channels", "1",
        ]
        let out = Pipe()
        mock.standardOutput = out
        mock.standardError = FileHandle.nullDevice
        try mock.run()
        // Not waited for: Process reaps it (a wait here would block the cooperative pool).
        defer { kill(mock.processIdentifier, SIGTERM) }
        let line = await readChildOutput(out.fileHandleForReading) { $0.hasSuffix("\n") }
        let port = try #require(
            line.split(separator: ":").last.flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) },
            "\(line)"
        )
        let config = directory.appendingPathComponent("config.yaml").path
        try """
        apns:
          endpoint: "127.0.0.1:\(port)"
          ca_file: "\(directory.appendingPathComponent("tls/ca.pem").path)"
        apps:
          default:
            bundle_id: "com.example.app"
            auth: {type: "token", key_file: "\(key)", key_id: "ABC123DEFG", team_id: "DEF123GHIJ"}
          other:
            bundle_id: "com.example.other"
            auth: {type: "token", key_file: "\(key)", key_id: "ABC123DEFG", team_id: "DEF123GHIJ"}
        """.write(toFile: config, atomically: true, encoding: .utf8)

        let first = try await runPushline(["channels", "create", "--config", config, "--storage-policy", "0"])
        #expect(first.status == 0 && !first.stdout.isEmpty, "\(first.stderr)")
        let second = try await runPushline(["channels", "create", "--config", config, "--storage-policy", "0"])
        #expect(second.status == 2)
        #expect(second.stderr == "channels create: APNs refused (127.0.0.1:\(port)): 400 CannotCreateChannelConfig\n", "\(second.stderr)")
        // A bundle id the mock's --topic does not allow: the credential is not for it.
        let mismatch = try await runPushline(["channels", "list", "--config", config, "--app", "other"])
        #expect(mismatch.status == 2 && mismatch.stderr.contains("403 TopicMismatch"), "\(mismatch.stderr)")
        // Arguments the command cannot use: exit 2 before anything is sent.
        let missing = try await runPushline(["channels", "delete", "--config", config])
        #expect(missing.status == 2 && missing.stderr.contains("--channel-id: required by delete"), "\(missing.stderr)")
        let unknownApp = try await runPushline(["channels", "list", "--config", config, "--app", "nope"])
        #expect(unknownApp.status == 2 && unknownApp.stderr.contains("--app: 'nope'"), "\(unknownApp.stderr)")
        // Nobody listening: not Apple's refusal, exit 1.
        try String(contentsOfFile: config, encoding: .utf8).replacingOccurrences(of: "127.0.0.1:\(port)", with: "127.0.0.1:1")
            .write(toFile: config, atomically: true, encoding: .utf8)
        let unreachable = try await runPushline(["channels", "list", "--config", config])
        #expect(unreachable.status == 1 && unreachable.stderr.contains("no answer from 127.0.0.1:1"), "\(unreachable.stderr)")
    }
}
