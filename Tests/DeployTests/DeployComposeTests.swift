import Foundation
import PushlineAPNSCore
import Testing
import Yams

@testable import PushlineWorker

/// compose.yaml, compose.config.yaml and prometheus.yml agree with each other.
@Suite struct DeployComposeTests {
    let compose: Node
    let configuration: Node

    init() throws {
        compose = try DeployFiles.document("compose.yaml")
        configuration = try #require(try Yams.compose(yaml: try DeployFiles.text("compose.config.yaml")))
    }

    @Test func theTopicsTheWorkersUseAreCreated() throws {
        let topics = try ComposeFacts.createdTopics(compose)
        for key in ["jobs_topic", "results_topic", "dead_letter_topic", "invalidations_topic"] {
            let topic = try #require(configuration.at("kafka", key)?.string, "kafka.\(key)")
            if topic.isEmpty { continue }
            #expect(topics[topic] != nil, "kafka.\(key) '\(topic)' is not created in compose.yaml (\(topics))")
        }
        #expect(topics["push.jobs"] == 12)
    }

    /// A worker with more than one app parks jobs on `kafka.deferred_topic` (`<jobs_topic>.deferred`
    /// by default): the stack creates it, with as many partitions as the jobs topic, so that adding
    /// an app to compose.config.yaml needs nothing else (docs/kafka.md, "Apps kept apart").
    @Test func theDeferredTopicIsCreatedLikeTheJobsTopic() async throws {
        let topics = try ComposeFacts.createdTopics(compose)
        let kafka = try await DeployFiles.load(try DeployFiles.text("compose.config.yaml")).kafka
        let jobs = try #require(topics[kafka.jobsTopic], "\(kafka.jobsTopic) is not created in compose.yaml")
        #expect(topics[kafka.deferredTopicName] == jobs, "\(kafka.deferredTopicName): \(topics)")
    }

    @Test func theWorkersReachKafkaOnItsAdvertisedListener() throws {
        let kafka = try ComposeFacts.service(named: "kafka", in: compose)
        let advertised = try #require(kafka.composeEnvironment["KAFKA_ADVERTISED_LISTENERS"])
        let brokers = try #require(configuration.at("kafka", "brokers")?.string)
        for broker in brokers.split(separator: ",") {
            #expect(advertised.contains("://\(broker)"), "kafka.brokers '\(broker)' is not advertised: \(advertised)")
        }
    }

    @Test func theMockMatchesTheWorkersEndpointTrustAndKey() throws {
        let mockEntry = try ComposeFacts.pushlineServices(compose).first { ComposeFacts.command($0.service).first == "mock-apns" }
        let (mockName, mock) = try #require(mockEntry, "compose.yaml: no mock-apns service")
        let arguments = ComposeFacts.command(mock)

        let endpointText = try #require(configuration.at("apns", "endpoint")?.string)
        let listenText = try #require(ComposeFacts.value(of: "--listen", in: arguments))
        let endpoint = try #require(HostPort(endpointText))
        let listen = try #require(HostPort(listenText))
        #expect(endpoint.host == mockName, "apns.endpoint must name the mock service (its certificate carries that name)")
        #expect(endpoint.port == listen.port)

        let selfSigned = try #require(ComposeFacts.value(of: "--self-signed", in: arguments))
        #expect(configuration.at("apns", "ca_file")?.string == selfSigned + "/ca.pem")

        let authKey = try #require(ComposeFacts.value(of: "--auth-key", in: arguments)).split(separator: ":").map(String.init)
        try #require(authKey.count == 3, "--auth-key KID:TEAM:PUBKEY.pem")
        let auth = try #require(configuration.at("apps", "default", "auth"))
        #expect(auth["key_id"]?.string == authKey[0])
        #expect(auth["team_id"]?.string == authKey[1])

        // The keygen service writes both halves of the key pair where the mock and workers read them.
        let keyFile = try #require(auth["key_file"]?.string)
        let keygen = ComposeFacts.command(try ComposeFacts.service(named: "keygen", in: compose)).joined(separator: "\n")
        for path in [keyFile, authKey[2]] {
            #expect(keygen.contains(URL(fileURLWithPath: path).lastPathComponent), "keygen does not write \(path)")
        }
        let keygenMounts = ComposeFacts.mounts(try ComposeFacts.service(named: "keygen", in: compose))
        let mockMounts = ComposeFacts.mounts(mock)
        for (workerName, worker) in try ComposeFacts.workerServices(compose) {
            let workerMounts = ComposeFacts.mounts(worker)
            for path in [keyFile, selfSigned + "/ca.pem"] {
                let mount = workerMounts.first { path.hasPrefix($0.key + "/") }
                #expect(mount != nil, "\(workerName) does not mount \(path)")
                #expect(
                    mount.map { keygenMounts[$0.key] == $0.value && mockMounts[$0.key] == $0.value } == true,
                    "\(workerName): \(path) is not on the volume keygen and the mock write"
                )
            }
        }
    }

    @Test func startOrderIsEnforced() throws {
        let workers = try ComposeFacts.workerServices(compose)
        #expect(workers.count == 2)
        for (name, worker) in workers {
            let dependencies = ComposeFacts.dependencies(worker)
            #expect(dependencies["topics"] == "service_completed_successfully", "\(name)")
            #expect(dependencies["keygen"] == "service_completed_successfully", "\(name)")
            #expect(dependencies["mock-apns"] == "service_healthy", "\(name)")
        }
        let topics = try ComposeFacts.service(named: "topics", in: compose)
        let mock = try ComposeFacts.service(named: "mock-apns", in: compose)
        #expect(ComposeFacts.dependencies(topics)["kafka"] == "service_healthy")
        #expect(ComposeFacts.dependencies(mock)["keygen"] == "service_completed_successfully")
        // A service_healthy condition needs a healthcheck on the service it waits for.
        for name in ["kafka", "mock-apns"] {
            let service = try ComposeFacts.service(named: name, in: compose)
            #expect(service["healthcheck"]?["test"] != nil, "\(name) has no healthcheck")
        }
    }

    @Test func stopGracePeriodOutlastsTheDrain() throws {
        let shutdown = try #require(configuration.at("worker", "shutdown_timeout_ms")?.int)
        for (name, worker) in try ComposeFacts.workerServices(compose) {
            let grace = try #require(worker["stop_grace_period"]?.string.flatMap(ComposeFacts.milliseconds), "\(name): stop_grace_period")
            #expect(grace > shutdown, "\(name): stop_grace_period \(grace) ms <= worker.shutdown_timeout_ms \(shutdown)")
        }
    }

    @Test func theWorkersPublishTheMetricsPortAndPrometheusScrapesEachOfThem() throws {
        let listenText = try #require(configuration.at("metrics", "listen")?.string)
        let listen = try #require(HostPort(listenText))
        let deployedPort = try deployedMetricsPort()
        #expect(listen.port == deployedPort)
        let workers = try ComposeFacts.workerServices(compose)
        for (name, worker) in workers {
            #expect(ComposeFacts.containerPorts(worker).contains(listen.port), "\(name) does not publish \(listen.port)")
            #expect(
                worker["volumes"]?.array().contains { $0.string?.hasPrefix("./compose.config.yaml:/etc/pushline/config.yaml") == true }
                    == true,
                "\(name) does not mount compose.config.yaml where its command reads it"
            )
            #expect(ComposeFacts.value(of: "--config", in: ComposeFacts.command(worker)) == "/etc/pushline/config.yaml")
        }
        let prometheus = try DeployFiles.document("prometheus.yml")
        var targets: Set<String> = []
        for job in prometheus["scrape_configs"]?.array() ?? [] {
            for group in job["static_configs"]?.array() ?? [] {
                targets.formUnion(group["targets"]?.array().compactMap(\.string) ?? [])
            }
        }
        #expect(targets == Set(workers.map { "\($0.name):\(listen.port)" }))
        let mounted = ComposeFacts.mounts(try ComposeFacts.service(named: "prometheus", in: compose))
        #expect(mounted["/etc/prometheus/prometheus.yml"] == "./prometheus.yml")
    }

    @Test func theKeyBelongsToTheImagesUser() throws {
        let uid = try DockerfileFacts.userID()
        let keygen = ComposeFacts.command(try ComposeFacts.service(named: "keygen", in: compose)).joined(separator: "\n")
        #expect(keygen.contains("chown \(uid):\(uid)"), "the worker (uid \(uid)) must own its 0600 key")
        #expect(keygen.contains("chmod 0600"))
    }

    @Test func durationsParse() {
        #expect(ComposeFacts.milliseconds("45s") == 45_000)
        #expect(ComposeFacts.milliseconds("1m30s") == 90_000)
        #expect(ComposeFacts.milliseconds("500ms") == 500)
        #expect(ComposeFacts.milliseconds("soon") == nil)
    }
}
