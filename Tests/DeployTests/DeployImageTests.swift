import Foundation
import Testing

/// What deploy/Dockerfile says, in the terms the cross-checks need.
enum DockerfileFacts {
    /// The numeric uid of the final `USER` instruction.
    static func userID() throws -> Int {
        let user = try #require(try DeployFiles.dockerfileInstructions().last { $0.instruction == "USER" }, "Dockerfile: no USER")
        let uid = user.arguments.split(separator: ":")[0]
        return try #require(Int(uid), "Dockerfile USER '\(user.arguments)' is not numeric (runAsNonRoot cannot verify a name)")
    }

    /// An exec-form instruction's arguments (ENTRYPOINT, CMD), parsed as the JSON array it is.
    static func exec(_ instruction: String) throws -> [String] {
        let found = try #require(
            try DeployFiles.dockerfileInstructions().last { $0.instruction == instruction },
            "Dockerfile: no \(instruction)"
        )
        let array = try JSONSerialization.jsonObject(with: Data(found.arguments.utf8)) as? [String]
        return try #require(array, "Dockerfile \(instruction) is not in exec form: \(found.arguments)")
    }

    /// The `FROM` lines as (image, stage name).
    static func stages() throws -> [(image: String, name: String?)] {
        try DeployFiles.dockerfileInstructions().filter { $0.instruction == "FROM" }.map { from in
            let words = from.arguments.split(separator: " ").map(String.init)
            let name = words.count >= 3 && words[1].uppercased() == "AS" ? words[2] : nil
            return (words[0], name)
        }
    }

    /// Expands `${NAME}` with the Dockerfile's ARG defaults.
    static func expand(_ text: String) throws -> String {
        var result = text
        for name in ["SWIFT_VERSION", "DEBIAN_RELEASE", "CONFLUENT_KAFKA_VERSION"] where result.contains("${\(name)}") {
            result = result.replacingOccurrences(of: "${\(name)}", with: try DeployFiles.dockerfileArgument(name))
        }
        return result
    }
}

/// deploy/Dockerfile builds what the issue asks for and agrees with scripts/setup and the manifests.
@Suite struct DeployImageTests {
    let instructions: [(instruction: String, arguments: String)]
    let runs: [String]

    init() throws {
        instructions = try DeployFiles.dockerfileInstructions()
        runs = instructions.filter { $0.instruction == "RUN" }.map(\.arguments)
    }

    @Test func buildsOnSwift6BookwormAndRunsOnBookwormSlim() throws {
        let stages = try DockerfileFacts.stages()
        try #require(stages.count == 2, "\(stages)")
        let build = try DockerfileFacts.expand(stages[0].image)
        let runtime = try DockerfileFacts.expand(stages[1].image)
        #expect(build.hasPrefix("swift:6.") && build.hasSuffix("-bookworm"), "\(build)")
        #expect(runtime == "debian:bookworm-slim")
        #expect(stages[0].name == "build")
        #expect(instructions.contains { $0.instruction == "COPY" && $0.arguments.hasPrefix("--from=build ") })
    }

    @Test func installsTheBuildAndRuntimePackages() throws {
        let build = try #require(runs.first { $0.contains("librdkafka-dev") })
        for package in ["librdkafka-dev", "libnghttp2-dev", "libssl-dev", "libjemalloc-dev", "pkg-config"] {
            #expect(build.contains(" \(package)"), "build stage lacks \(package)")
        }
        let runtime = try #require(runs.first { $0.contains("libnghttp2-14") })
        for package in ["libnghttp2-14", "libssl3", "libjemalloc2", "ca-certificates", "curl", "--no-install-recommends"] {
            #expect(runtime.contains(" \(package)"), "runtime stage lacks \(package)")
        }
    }

    /// APNs' server certificates chain to "USERTrust RSA Certification Authority" since 2025
    /// (sandbox 2025-01-20, production 2025-02-24). The image trusts the system store of Debian's
    /// ca-certificates for its release; this machine runs the same release, so its bundle is the
    /// image's, and it must hold that root.
    @Test func theImagesTrustStoreHoldsAPNsRoot() throws {
        let release = try DeployFiles.dockerfileArgument("DEBIAN_RELEASE")
        let osRelease = try String(contentsOfFile: "/etc/os-release", encoding: .utf8)
        try #require(osRelease.contains("VERSION_CODENAME=\(release)"), "this check needs a Debian \(release) machine")
        let runtime = try #require(runs.first { $0.contains("libnghttp2-14") })
        #expect(runtime.contains(" ca-certificates"))
        let root = try String(
            contentsOfFile: "/usr/share/ca-certificates/mozilla/USERTrust_RSA_Certification_Authority.crt",
            encoding: .utf8
        )
        let bundle = try String(contentsOfFile: "/etc/ssl/certs/ca-certificates.crt", encoding: .utf8)
        let body = root.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        #expect(!body.isEmpty && bundle.split(separator: "\n").joined().contains(body), "USERTrust RSA is not in the system bundle")
    }

    @Test func resolvesDependenciesBeforeCopyingSources() throws {
        let manifest = try #require(instructions.firstIndex { $0.instruction == "COPY" && $0.arguments.hasPrefix("Package.swift") })
        let resolve = try #require(instructions.firstIndex { $0.instruction == "RUN" && $0.arguments.contains("swift package resolve") })
        let sources = try #require(instructions.firstIndex { $0.instruction == "COPY" && $0.arguments.hasPrefix("Sources") })
        #expect(manifest < resolve && resolve < sources)
        let build = try #require(runs.first { $0.contains("swift build") })
        for flag in ["-c release", "--product pushline", "--static-swift-stdlib"] {
            #expect(build.contains(flag), "swift build lacks \(flag)")
        }
    }

    @Test func takesLibrdkafkaFromTheWheelScriptsSetupPins() throws {
        let setup = try String(contentsOf: DeployFiles.root.appendingPathComponent("scripts/setup"), encoding: .utf8)
        let pinned = setup.split(separator: "\n").first { $0.hasPrefix("CONFLUENT_KAFKA_VERSION=") }
        let setupVersion = try #require(pinned).dropFirst("CONFLUENT_KAFKA_VERSION=".count).trimmingCharacters(in: ["\""])
        let imageVersion = try DeployFiles.dockerfileArgument("CONFLUENT_KAFKA_VERSION")
        #expect(imageVersion == setupVersion)
        #expect(setupVersion == "2.16.1")
        let wheel = try #require(runs.first { $0.contains("confluent-kafka==") })
        #expect(wheel.contains("python3 -m venv"))
        #expect(wheel.contains("--only-binary=:all:"))
        #expect(wheel.contains("confluent_kafka.libs/librdkafka-*.so.1"))

        let copy = try #require(instructions.first { $0.instruction == "COPY" && $0.arguments.contains("librdkafka.so.1") }).arguments
        let destination = try #require(copy.split(separator: " ").last.map(String.init))
        #expect(destination.hasSuffix("/librdkafka.so.1"))
        let libraryPath = try #require(instructions.first { $0.instruction == "ENV" && $0.arguments.hasPrefix("LD_LIBRARY_PATH=") })
        #expect(libraryPath.arguments == "LD_LIBRARY_PATH=" + URL(fileURLWithPath: destination).deletingLastPathComponent().path)
    }

    @Test func runsPushlineAsANonRootUserWithAHealthcheck() throws {
        let uid = try DockerfileFacts.userID()
        let entrypoint = try DockerfileFacts.exec("ENTRYPOINT")
        let command = try DockerfileFacts.exec("CMD")
        #expect(uid != 0)
        #expect(entrypoint == ["pushline"])
        #expect(command == ["run", "--config", "/etc/pushline/config.yaml"])
        let healthcheck = try #require(instructions.first { $0.instruction == "HEALTHCHECK" }).arguments
        #expect(healthcheck.contains("/healthz"))
        #expect(instructions.contains { $0.instruction == "EXPOSE" })
    }

    @Test func theDockerignoreAdmitsWhatTheDockerfileCopies() throws {
        let ignore = try DeployFiles.text("Dockerfile.dockerignore").split(separator: "\n").map(String.init)
        let admitted = Set(ignore.filter { $0.hasPrefix("!") }.map { String($0.dropFirst()).trimmingCharacters(in: ["/"]) })
        for copy in instructions where copy.instruction == "COPY" && !copy.arguments.hasPrefix("--from") {
            for source in copy.arguments.split(separator: " ").dropLast() {
                let name = source.trimmingCharacters(in: ["*"])
                #expect(admitted.contains(name), "COPY \(source) is excluded by Dockerfile.dockerignore")
            }
        }
    }
}
