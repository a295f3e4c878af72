import Foundation
import PushlineAPNSCore
import Testing
import Yams

@testable import PushlineWorker

/// The Kubernetes manifests agree with each other, with the ConfigMap's configuration, with the
/// image and with the topic layout compose creates.
@Suite struct DeployKubernetesTests {
    let deployment: Node
    let worker: Node
    let configuration: Node

    init() throws {
        deployment = try DeployFiles.kubernetes("Deployment")
        worker = try KubernetesFacts.workerContainer(deployment)
        configuration = try #require(try Yams.compose(yaml: try DeployFiles.configMapConfiguration()))
    }

    @Test func theMetricsPortAgreesEverywhere() throws {
        let port = try deployedMetricsPort()
        for file in try DeployFiles.configurationFiles() {
            let listen = try #require(try file.tree.at("metrics", "listen")?.string)
            #expect(HostPort(listen)?.port == port, "\(file.name): metrics.listen \(listen)")
        }
        #expect(worker["ports"]?.array().contains { $0["containerPort"]?.int == port } == true, "container port")
        for probe in ["readinessProbe", "livenessProbe"] {
            let probePort = KubernetesFacts.resolve(worker[probe]?.at("httpGet", "port"), in: worker)
            #expect(probePort == port, "\(probe) port")
        }

        let service = try DeployFiles.kubernetes("Service")
        let servicePorts = service.at("spec", "ports")?.array() ?? []
        #expect(servicePorts.contains { KubernetesFacts.resolve($0["targetPort"], in: worker) == port }, "Service targetPort")

        let monitor = try DeployFiles.kubernetes("ServiceMonitor")
        let endpoints = monitor.at("spec", "endpoints")?.array() ?? []
        #expect(!endpoints.isEmpty)
        for endpoint in endpoints {
            let named = servicePorts.first { $0["name"]?.string == endpoint["port"]?.string }
            #expect(named != nil, "ServiceMonitor port '\(endpoint["port"]?.string ?? "")' is not a Service port name")
            #expect(named.flatMap { KubernetesFacts.resolve($0["targetPort"], in: worker) } == port)
            #expect(endpoint["path"]?.string == "/metrics")
        }

        let instructions = try DeployFiles.dockerfileInstructions()
        let exposed = instructions.filter { $0.instruction == "EXPOSE" }.flatMap { $0.arguments.split(separator: " ") }
        #expect(exposed.contains { $0.split(separator: "/")[0] == "\(port)" }, "Dockerfile EXPOSE")
        let healthcheck = try #require(instructions.first { $0.instruction == "HEALTHCHECK" }, "Dockerfile HEALTHCHECK").arguments
        #expect(healthcheck.contains("http://127.0.0.1:\(port)/healthz"), "Dockerfile HEALTHCHECK: \(healthcheck)")
    }

    @Test func probesAskTheWorkersHealthEndpoints() {
        #expect(worker.at("readinessProbe", "httpGet", "path")?.string == "/readyz")
        #expect(worker.at("livenessProbe", "httpGet", "path")?.string == "/healthz")
    }

    @Test func theGracePeriodOutlastsTheDrain() throws {
        let grace = try #require(try KubernetesFacts.podSpec(deployment)["terminationGracePeriodSeconds"]?.int)
        let shutdown = try #require(configuration.at("worker", "shutdown_timeout_ms")?.int)
        #expect(grace * 1000 > shutdown, "terminationGracePeriodSeconds \(grace) s <= worker.shutdown_timeout_ms \(shutdown)")
    }

    @Test func theKeyTravelsFromTheSecretToKeyFile() throws {
        let template = try DeployFiles.document("kubernetes/secret.template.yaml")
        #expect(template["kind"]?.string == "Secret")
        let secretVolumes = try KubernetesFacts.volumes(ofKind: "secret", in: deployment)
        try #require(secretVolumes.count == 1)
        let secretVolume = secretVolumes[0]
        let secret = try #require(secretVolume["secret"])
        #expect(secret["secretName"]?.string == template.at("metadata", "name")?.string)
        #expect(secret["defaultMode"]?.int == 0o400)
        let items = secret["items"]?.array() ?? []
        try #require(items.count == 1, "the Secret volume projects exactly the key")
        let item = items[0]
        #expect(item["mode"]?.int == 0o400)
        let key = try #require(item["key"]?.string)
        let secretData = try #require(template["stringData"]?.mapping ?? template["data"]?.mapping, "the template has no data")
        let templateKeys = Array(secretData.keys).compactMap(\.string)
        #expect(templateKeys.contains(key), "the template has no key \(key): \(templateKeys)")

        // install-apns-key copies <secret mount>/<item path> to key_file as a 0400 file of the
        // worker's user; the worker mounts the same emptyDir at key_file's directory.
        let keyFile = try #require(configuration.at("apps", "default", "auth", "key_file")?.string)
        let installer = try KubernetesFacts.initContainer("install-apns-key", in: deployment)
        let command = installer["command"]?.array().compactMap(\.string) ?? []
        let secretVolumeName = try #require(secretVolume["name"]?.string)
        let secretMount = try #require(KubernetesFacts.mountPath(of: secretVolumeName, in: installer))
        let path = try #require(item["path"]?.string)
        #expect(command == ["install", "-m", "0400", "\(secretMount)/\(path)", keyFile])
        let keyDirectory = URL(fileURLWithPath: keyFile).deletingLastPathComponent().path
        let keyVolume = try #require(
            worker["volumeMounts"]?.array().first { $0["mountPath"]?.string == keyDirectory }?["name"]?.string,
            "the worker mounts nothing at \(keyDirectory)"
        )
        #expect(KubernetesFacts.mountPath(of: keyVolume, in: installer) == keyDirectory)
        let keyVolumeSource = try KubernetesFacts.volume(keyVolume, in: deployment)
        #expect(keyVolumeSource["emptyDir"]?["medium"]?.string == "Memory")
        #expect(
            KubernetesFacts.mountPath(of: secretVolumeName, in: worker) == nil,
            "the worker should read the copy, not the group-readable Secret volume"
        )
    }

    @Test func theConfigMapIsMountedWhereTheWorkerAndTheImageReadIt() throws {
        let configMap = try DeployFiles.kubernetes("ConfigMap")
        let volumes = try KubernetesFacts.volumes(ofKind: "configMap", in: deployment)
        try #require(volumes.count == 1)
        #expect(volumes[0].at("configMap", "name")?.string == configMap.at("metadata", "name")?.string)
        let volumeName = try #require(volumes[0]["name"]?.string)
        let mount = try #require(KubernetesFacts.mountPath(of: volumeName, in: worker))
        let args = worker["args"]?.array().compactMap(\.string) ?? []
        #expect(args == ["run", "--config", "\(mount)/config.yaml"])
        let imageCommand = try DockerfileFacts.exec("CMD")
        #expect(imageCommand == args, "the image's default command reads the same file")
    }

    @Test func runsAsTheImagesNonRootUser() throws {
        let security = try #require(try KubernetesFacts.podSpec(deployment)["securityContext"])
        #expect(security["runAsNonRoot"]?.bool == true)
        let uid = try DockerfileFacts.userID()
        #expect(security["runAsUser"]?.int == uid)
        #expect(uid != 0)
    }

    @Test func selectorsMatchThePods() throws {
        let podLabels = deployment.at("spec", "template", "metadata", "labels")
        #expect(KubernetesFacts.selects(deployment.at("spec", "selector", "matchLabels"), podLabels), "Deployment selector")
        let service = try DeployFiles.kubernetes("Service")
        #expect(KubernetesFacts.selects(service.at("spec", "selector"), podLabels), "Service selector")
        let pdb = try DeployFiles.kubernetes("PodDisruptionBudget")
        #expect(KubernetesFacts.selects(pdb.at("spec", "selector", "matchLabels"), podLabels), "PDB selector")
        let monitor = try DeployFiles.kubernetes("ServiceMonitor")
        #expect(
            KubernetesFacts.selects(monitor.at("spec", "selector", "matchLabels"), service.at("metadata", "labels")),
            "ServiceMonitor selector"
        )
    }

    @Test func kedaScalesTheDeploymentOnTheJobsTopicWithinThePartitions() throws {
        let scaledObject = try DeployFiles.kubernetes("ScaledObject")
        #expect(scaledObject.at("spec", "scaleTargetRef", "name")?.string == deployment.at("metadata", "name")?.string)
        let triggers = scaledObject.at("spec", "triggers")?.array() ?? []
        let kafka = try #require(triggers.first { $0["type"]?.string == "kafka" }?["metadata"], "no kafka trigger")
        #expect(kafka["topic"]?.string == configuration.at("kafka", "jobs_topic")?.string)
        #expect(kafka["consumerGroup"]?.string == configuration.at("kafka", "group_id")?.string)
        #expect(kafka["bootstrapServers"]?.string == configuration.at("kafka", "brokers")?.string)
        #expect(Int(kafka["lagThreshold"]?.string ?? "") ?? 0 > 0)

        let compose = try DeployFiles.document("compose.yaml")
        let topics = try ComposeFacts.createdTopics(compose)
        let partitions = try #require(topics["push.jobs"], "compose.yaml does not create push.jobs")
        let maximum = try #require(scaledObject.at("spec", "maxReplicaCount")?.int)
        let minimum = scaledObject.at("spec", "minReplicaCount")?.int ?? 0
        #expect(maximum <= partitions, "more workers than push.jobs partitions would sit idle")
        #expect(minimum >= 1 && minimum <= maximum)
        // The PDB must leave room to evict: at most minReplicaCount - 1 pods may have to stay.
        let pdb = try DeployFiles.kubernetes("PodDisruptionBudget")
        #expect((pdb.at("spec", "maxUnavailable")?.int ?? 0) >= 1)
        // KEDA's HPA owns the replica count.
        #expect(deployment.at("spec", "replicas") == nil)
    }
}
