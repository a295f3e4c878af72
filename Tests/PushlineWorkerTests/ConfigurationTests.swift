import Foundation
import PushlineAPNSCore
import Testing

@testable import PushlineWorker

@Suite struct ConfigurationTests {
    let directory: URL

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("pushline-config-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    func write(_ name: String, _ text: String, mode: Int = 0o600) throws -> String {
        let path = directory.appendingPathComponent(name).path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
        return path
    }

    func problems(_ yaml: String, environment: [String: String] = [:]) async throws -> [String] {
        let file = try write("config.yaml", yaml)
        do {
            _ = try await ConfigurationLoader.load(file: file, environment: environment)
            return []
        } catch let problems as ConfigurationProblems {
            return problems.problems
        }
    }

    @Test func loadsTheContractExampleWithEnvironmentOverrides() async throws {
        let key = try write("AuthKey.p8", "key")
        let yaml = """
            kafka:
              brokers: "127.0.0.1:9092"
              group_id: "pushline"
              properties:
                security.protocol: "SASL_SSL"
                sasl.password: "hunter2"
            apns:
              endpoint: "production"
              connections: 4
            apps:
              default:
                bundle_id: "com.example.app"
                auth:
                  type: "token"
                  key_file: "\(key)"
                  key_id: "ABC123DEFG"
                  team_id: "DEF123GHIJ"
            worker:
              max_inflight: 20000
              invalidate_on: ["Unregistered"]
            """
        let file = try write("config.yaml", yaml)
        let configuration = try await ConfigurationLoader.load(
            file: file,
            environment: ["KAFKA_BROKERS": "10.0.0.1:9093", "APNS_CONNECTIONS": "8", "KAFKA_PROPERTY_SASL_MECHANISMS": "PLAIN"]
        )
        #expect(configuration.kafka.brokers == "10.0.0.1:9093")
        #expect(configuration.apns.connections == 8)
        #expect(configuration.kafka.properties["security.protocol"] == "SASL_SSL")
        #expect(configuration.kafka.properties["sasl.mechanisms"] == "PLAIN")
        #expect(configuration.apps["default"]?.bundleID == "com.example.app")
        #expect(configuration.apps["default"]?.auth == .token(keyFile: key, keyID: "ABC123DEFG", teamID: "DEF123GHIJ"))
        #expect(configuration.worker.maxInflight == 20_000)
        #expect(configuration.apns.maxStreamsPerConnection == 1000)
        let rendered = configuration.renderedYAML()
        #expect(rendered.contains("\"sasl.password\": \"<redacted>\""))
        #expect(!rendered.contains("hunter2"))
    }

    /// deploy/pushline.example.yaml, the file users start from, loads as it is (its key file made
    /// real): every key it shows is one the worker knows, with the values it documents.
    @Test func theExampleFileUsersStartFromLoadsAsItIs() async throws {
        let example = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("deploy/pushline.example.yaml")
        let text = try String(contentsOf: example, encoding: .utf8)
        #expect(text.contains("key_file: \"AuthKey_KEYID.p8\""))
        let key = try write("AuthKey_KEYID.p8", "key")
        let yaml = text.replacingOccurrences(of: "\"AuthKey_KEYID.p8\"", with: "\"\(key)\"")
        let configuration = try await ConfigurationLoader.load(file: try write("example.yaml", yaml), environment: [:])
        #expect(configuration.kafka.urgentJobsTopic == "")
        #expect(configuration.kafka.consumedTopics == ["push.jobs"])
        #expect(configuration.apps["default"]?.maxRate == 0)
        #expect(configuration.apns.maxStreamsPerConnection == 1000)
    }

    @Test func anUrgentLaneMustBeATopicOfItsOwn() async throws {
        let key = try write("AuthKey.p8", "key")
        let lines = try await problems(
            """
            kafka:
              jobs_topic: "push.jobs"
              urgent_jobs_topic: "push.jobs"
            apps:
              default:
                bundle_id: "com.example.app"
                auth: {type: "token", key_file: "\(key)", key_id: "K", team_id: "T"}
            """
        )
        #expect(lines == ["kafka.urgent_jobs_topic: 'push.jobs' is also the jobs_topic"])
    }

    @Test func threeMistakesGiveThreeLinesNamingTheKeys() async throws {
        let key = try write("AuthKey.p8", "key")
        let lines = try await problems(
            """
            kafka:
              brokers: ""
            apns:
              connections: "many"
            apps:
              default:
                bundle_id: "com.example.app"
                auth:
                  type: "token"
                  key_file: "\(key)"
                  key_id: "ABC123DEFG"
                  team_id: "DEF123GHIJ"
            worker:
              max_inflght: 5
            """
        )
        #expect(lines.count == 3, "\(lines)")
        #expect(lines.contains { $0.hasPrefix("kafka.brokers:") })
        #expect(lines.contains { $0.hasPrefix("apns.connections:") })
        #expect(lines.contains { $0.hasPrefix("worker.max_inflght: unknown key") })
    }

    @Test func keyFileChecks() async throws {
        let open = try write("Open.p8", "key", mode: 0o644)
        let yaml = { (path: String) in
            """
            apps:
              default:
                bundle_id: "com.example.app"
                auth: {type: "token", key_file: "\(path)", key_id: "K", team_id: "T"}
            """
        }
        let insecure = try await problems(yaml(open))
        #expect(insecure.count == 1)
        #expect(insecure.first?.contains("chmod 600") == true)
        #expect(try await problems(yaml(open), environment: ["WORKER_ALLOW_INSECURE_KEY_FILES": "true"]).isEmpty)
        let missing = try await problems(yaml("/nonexistent/AuthKey.p8"))
        #expect(missing == ["apps.default.auth.key_file: cannot read '/nonexistent/AuthKey.p8': no such file"])
    }

    @Test func customEndpointNeedsACAFile() async throws {
        let key = try write("AuthKey.p8", "key")
        let lines = try await problems(
            """
            apns:
              endpoint: "127.0.0.1:2197"
            apps:
              default:
                bundle_id: "b"
                auth: {type: "token", key_file: "\(key)", key_id: "K", team_id: "T"}
            """
        )
        #expect(lines.count == 1)
        #expect(lines.first?.hasPrefix("apns.endpoint:") == true)
    }

    /// Apple's environment-scoped keys (February 2025): a key for one environment pointed at the
    /// other is one problem naming the key; `any`, a matching endpoint or a custom one pass.
    @Test func anEnvironmentScopedKeyMustMatchItsEndpoint() async throws {
        let key = try write("AuthKey.p8", "key")
        func config(environment: String, endpoint: String, appEndpoint: String = "") -> String {
            """
            apns:
              endpoint: "\(endpoint)"
              ca_file: "\(key)"
            apps:
              default:
                bundle_id: "b"
                endpoint: "\(appEndpoint)"
                auth: {type: "token", key_file: "\(key)", key_id: "K", team_id: "T", environment: "\(environment)"}
            """
        }
        let wrong = try await problems(config(environment: "production", endpoint: "sandbox"))
        #expect(
            wrong == [
                "apps.default.auth.environment: a production-only credential, but apns.endpoint is sandbox; "
                    + "APNs refuses it there (use a sandbox or an any-environment key, or point the app at production)"
            ]
        )
        let overridden = try await problems(config(environment: "sandbox", endpoint: "sandbox", appEndpoint: "production"))
        #expect(overridden.count == 1 && overridden[0].contains("apps.default.endpoint is production"), "\(overridden)")
        #expect(try await problems(config(environment: "sandbox", endpoint: "sandbox")) == [])
        #expect(try await problems(config(environment: "any", endpoint: "production")) == [])
        #expect(try await problems(config(environment: "production", endpoint: "127.0.0.1:2197")) == [])
        // Apple's alternative port keeps the environment check, however it is written.
        let alternative = try await problems(config(environment: "production", endpoint: "sandbox:2197"))
        #expect(alternative.count == 1 && alternative[0].contains("apns.endpoint is sandbox"), "\(alternative)")
        let spelled = try await problems(config(environment: "sandbox", endpoint: "api.push.apple.com:2197"))
        #expect(spelled.count == 1 && spelled[0].contains("apns.endpoint is production"), "\(spelled)")
        #expect(try await problems(config(environment: "production", endpoint: "production:2197")) == [])
        let typo = try await problems(config(environment: "prod", endpoint: "production"))
        #expect(typo == ["apps.default.auth.environment: 'prod', must be one of any, sandbox, production"])
    }

    @Test func certificateAuthForms() async throws {
        let cert = try write("cert.pem", "c")
        let p12 = try write("cert.p12", "p")
        let file = try write(
            "config.yaml",
            """
            apps:
              pem:
                bundle_id: "a"
                auth: {type: "certificate", cert_file: "\(cert)", key_file: "\(cert)"}
              p12:
                bundle_id: "b"
                auth: {type: "certificate", p12_file: "\(p12)", p12_password_env: ""}
            """
        )
        let configuration = try await ConfigurationLoader.load(file: file, environment: [:])
        #expect(configuration.apps["pem"]?.auth == .certificatePEM(certFile: cert, keyFile: cert))
        #expect(configuration.apps["p12"]?.auth == .certificatePKCS12(p12File: p12, passwordEnvironmentVariable: ""))
    }

    @Test func hostPortParsing() {
        #expect(HostPort("127.0.0.1:2197") == HostPort(host: "127.0.0.1", port: 2197))
        #expect(HostPort("[::1]:443") == HostPort(host: "::1", port: 443))
        #expect(HostPort("nohost") == nil)
        #expect(HostPort("h:0") == nil)
        #expect(HostPort(":80") == nil)
    }
}
