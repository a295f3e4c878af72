import Foundation
import PushlineTestSupport
import Testing

/// The worker behind an egress proxy: every APNs connection is an HTTP CONNECT tunnel through a
/// loopback proxy, and TLS to the mock runs inside it.
@Suite(.serialized, .timeLimit(.minutes(3))) struct ProxyEndToEndTests {
    @Test func theWorkerDeliversThroughAConnectProxy() async throws {
        let proxy = try await ConnectProxy()
        let override = AppsOverride(
            apps: { mock in
                ["default": AppsOverride.tokenApp(keyFrom: mock, ["proxy": "http://pushline@127.0.0.1:\(proxy.port)"])]
            },
            caFile: { $0.caFile }
        )
        let harness = try await Harness.start(apps: override)
        var values: [[UInt8]] = []
        var keys: [String] = []
        var tokens: Set<String> = []
        for job in 0..<100 {
            let list = (0..<2).map { deviceToken(job: job, index: $0) }
            tokens.formUnion(list)
            let quoted = list.map { "\"\($0)\"" }.joined(separator: ",")
            values.append(Array(#"{"id":"p-\#(job)","tokens":[\#(quoted)],"payload":{"aps":{}}}"#.utf8))
            keys.append("p-\(job)")
        }
        _ = try await harness.produce(values, keys: keys)
        let expected = tokens
        let worker = try harness.startWorker(environment: ["APNS_PROXY_PASSWORD_ENV": "PROXY_PASSWORD", "PROXY_PASSWORD": "s3cret"])

        let results = try await harness.read(Harness.resultsTopic) { records in
            records.map(json).filter { $0["type"] as? String == "delivery" }.count >= expected.count
        }
        let delivered = results.map(json).filter { $0["type"] as? String == "delivery" && $0["status"] as? Int == 200 }
        #expect(Set(delivered.compactMap { $0["token"] as? String }) == tokens)
        worker.terminate()
        #expect(await worker.waitForExit(timeout: .seconds(40)) == 0)

        // The proxy saw one CONNECT per connection, with the credentials, then only TLS.
        let tunnels = proxy.tunnels
        #expect(!tunnels.isEmpty)
        for tunnel in tunnels {
            #expect(tunnel.head.hasPrefix("CONNECT \(harness.mock.endpoint) HTTP/1.1\r\n"), "\(tunnel.head)")
            #expect(tunnel.head.contains("\r\nProxy-Authorization: Basic cHVzaGxpbmU6czNjcmV0"))
            #expect(tunnel.firstByte == 0x16, "a TLS handshake, not plaintext, goes through the tunnel")
        }
        #expect(worker.log.contains("proxy"))
        await harness.stop()
        await proxy.stop()
    }
}
