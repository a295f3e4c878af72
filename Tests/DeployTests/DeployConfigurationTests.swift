import Foundation
import PushlineAPNSCore
import Testing
import Yams

@testable import PushlineWorker

/// The configuration files shipped under deploy/ are ones the worker accepts, and every
/// environment variable the deployments set names a key the worker knows.
@Suite struct DeployConfigurationTests {
    @Test(arguments: try DeployFiles.configurationFiles())
    func holdsOnlyKnownKeys(_ file: DeployFiles.ConfigurationFile) throws {
        let tree = try file.tree
        #expect(ConfigurationSchema.unknownKeys(in: tree) == [])
    }

    @Test(arguments: try DeployFiles.configurationFiles())
    func loadsWhenItsFilesExist(_ file: DeployFiles.ConfigurationFile) async throws {
        do {
            let configuration = try await DeployFiles.load(file.text)
            #expect(!configuration.apps.isEmpty)
        } catch let problems as ConfigurationProblems {
            Issue.record("\(file.name) does not load:\n\(problems)")
        }
    }

    @Test func theComposeWorkersLoadWithTheirEnvironment() async throws {
        let compose = try DeployFiles.document("compose.yaml")
        let text = try DeployFiles.text("compose.config.yaml")
        let workers = try ComposeFacts.workerServices(compose)
        #expect(workers.count == 2)
        var clientIDs: Set<String> = []
        for (name, service) in workers {
            let configuration = try await DeployFiles.load(text, environment: service.composeEnvironment)
            #expect(
                HostPort(configuration.metrics.listen)?.host == "0.0.0.0",
                "\(name): metrics must listen on all interfaces in a container"
            )
            clientIDs.insert(configuration.kafka.properties["client.id"] ?? "")
        }
        #expect(clientIDs.count == workers.count, "each worker needs its own client.id: \(clientIDs)")
    }

    @Test func theDeploymentLoadsWithItsEnvironment() async throws {
        let deployment = try DeployFiles.kubernetes("Deployment")
        let container = try KubernetesFacts.workerContainer(deployment)
        var environment: [String: String] = [:]
        for variable in container["env"]?.array() ?? [] {
            if let name = variable["name"]?.string, let value = variable["value"]?.string {
                environment[name] = value
            }
        }
        let configuration = try await DeployFiles.load(try DeployFiles.configMapConfiguration(), environment: environment)
        #expect(configuration.kafka.properties["client.id"]?.hasPrefix("pushline-") == true)
        #expect(HostPort(configuration.metrics.listen)?.host == "0.0.0.0")
    }

    @Test func composeSetsOnlyKnownConfigurationVariables() throws {
        let compose = try DeployFiles.document("compose.yaml")
        let tree = try #require(try Yams.compose(yaml: try DeployFiles.text("compose.config.yaml")))
        let services = try ComposeFacts.pushlineServices(compose)
        #expect(services.count >= 3)
        for (name, service) in services {
            let unknown = DeployFiles.unknownVariables(service.composeEnvironment, appNames: DeployFiles.appNames(in: tree))
            #expect(unknown == [], "compose service \(name)")
        }
    }

    @Test func kubernetesSetsOnlyKnownConfigurationVariables() throws {
        let deployment = try DeployFiles.kubernetes("Deployment")
        let tree = try #require(try Yams.compose(yaml: try DeployFiles.configMapConfiguration()))
        let spec = try #require(deployment.at("spec", "template", "spec"))
        let containers = (spec["containers"]?.array() ?? []) + (spec["initContainers"]?.array() ?? [])
        for container in containers {
            var variables: [String: String] = [:]
            for variable in container["env"]?.array() ?? [] {
                if let name = variable["name"]?.string { variables[name] = variable["value"]?.string ?? "" }
            }
            let unknown = DeployFiles.unknownVariables(variables, appNames: DeployFiles.appNames(in: tree))
            #expect(unknown == [], "container \(container["name"]?.string ?? "?")")
        }
    }

    @Test func unknownVariablesAreCaught() {
        // The check above would be worthless if it accepted everything.
        let unknown = DeployFiles.unknownVariables(
            [
                "KAFKA_BROKER": "x", "APPS_DEFAULT_AUTH_KEYFILE": "x", "KAFKA_PROPERTY_CLIENT_ID": "x",
                "APPS_DEFAULT_AUTH_KEY_FILE": "x", "METRICS_LISTEN": "x", "POD_NAME": "x", "LOG_FORMAT": "x",
            ],
            appNames: ["default"]
        )
        #expect(unknown == ["APPS_DEFAULT_AUTH_KEYFILE", "KAFKA_BROKER"])
    }

    @Test func containersListenOnAllInterfacesAndTheExampleOnLoopback() throws {
        for file in try DeployFiles.configurationFiles() {
            let listen = try #require(try file.tree.at("metrics", "listen")?.string, "\(file.name): metrics.listen")
            let hostPort = try #require(HostPort(listen), "\(file.name): \(listen)")
            let expected = file.name.hasSuffix(".example.yaml") ? "127.0.0.1" : "0.0.0.0"
            #expect(hostPort.host == expected, "\(file.name)")
        }
    }
}
