import Foundation
import Testing
import Yams

/// Every file under deploy/ parses: a typo in a manifest fails here, not at `kubectl apply`.
@Suite struct DeployParsingTests {
    @Test func everyYAMLFileParsesIntoMappings() throws {
        let files = DeployFiles.files(withExtensions: ["yaml", "yml"])
        #expect(files.count >= 12, "\(files)")
        for file in files {
            let documents = try DeployFiles.documents(file)
            #expect(!documents.isEmpty, "\(file): no YAML document")
            for document in documents {
                #expect(document.mapping != nil, "\(file): a document is not a mapping")
            }
        }
    }

    @Test func everyKubernetesObjectHasAPIVersionKindAndName() throws {
        for file in DeployFiles.files(withExtensions: ["yaml", "yml"]) where file.hasPrefix("kubernetes/") {
            for document in try DeployFiles.documents(file) {
                #expect(document["apiVersion"]?.string?.isEmpty == false, "\(file): apiVersion")
                #expect(document["kind"]?.string?.isEmpty == false, "\(file): kind")
                if document["kind"]?.string != "Kustomization" {
                    #expect(document.at("metadata", "name")?.string?.isEmpty == false, "\(file): metadata.name")
                }
            }
        }
    }

    @Test func everyJSONFileParses() throws {
        let files = DeployFiles.files(withExtensions: ["json"])
        #expect(!files.isEmpty)
        for file in files {
            let data = try Data(contentsOf: DeployFiles.url(file))
            #expect(throws: Never.self, "\(file)") { try JSONSerialization.jsonObject(with: data) }
        }
    }

    @Test func theKustomizationListsEveryManifestButTheSecretTemplate() throws {
        let kustomization = try DeployFiles.document("kubernetes/kustomization.yaml")
        let listed = Set(kustomization["resources"]?.array().compactMap(\.string) ?? [])
        let present = Set(
            DeployFiles.files(withExtensions: ["yaml", "yml"])
                .filter { $0.hasPrefix("kubernetes/") }
                .map { String($0.dropFirst("kubernetes/".count)) }
        )
        // The template holds placeholders: applying it would replace a real key.
        #expect(listed == present.subtracting(["kustomization.yaml", "secret.template.yaml"]))
        #expect(!listed.contains("secret.template.yaml"))
    }
}
