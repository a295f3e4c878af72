// swift-tools-version:6.1
import PackageDescription

// No unsafe flags: SwiftPM refuses a package that has them as a dependency by version, and other
// packages depend on our libraries. The few hot class properties whose run-time exclusivity
// checks showed in the profile are marked `@exclusivity(unchecked)` where they are declared
// (docs/architecture.md, "Unsafe constructs on the hot path").
let strict: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny")
]

let package = Package(
    name: "pushline",
    platforms: [.macOS(.v15)],
    // docs/api.md: the supported products (the APNs client, its values, the mock) and why the
    // others are products with no promise (the bench package builds them).
    products: [
        .executable(name: "pushline", targets: ["pushline"]),
        .library(name: "PushlineAPNS", targets: ["PushlineAPNS"]),
        .library(name: "PushlineAPNSCore", targets: ["PushlineAPNSCore"]),
        .library(name: "PushlineAPNSMock", targets: ["PushlineAPNSMock"]),
        .library(name: "PushlineTLS", targets: ["PushlineTLS"]),
        .library(name: "PushlineHTTP2", targets: ["PushlineHTTP2"]),
        .library(name: "PushlineHTTP2Server", targets: ["PushlineHTTP2Server"]),
        .library(name: "PushlineTestCA", targets: ["PushlineTestCA"]),
        .library(name: "PushlineWorker", targets: ["PushlineWorker"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-configuration.git", from: "1.4.0", traits: ["YAML"]),
        // Already resolved through swift-configuration's YAML trait; used directly only to list the
        // dynamic keys (app names, Kafka properties) and to find unknown keys in the file.
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
    ],
    targets: [
        // System libraries (Debian -dev packages; see scripts/setup).
        .systemLibrary(name: "CRdKafka", pkgConfig: "rdkafka", providers: [.apt(["librdkafka-dev"])]),
        .systemLibrary(name: "CNGHTTP2", pkgConfig: "libnghttp2", providers: [.apt(["libnghttp2-dev"])]),
        .systemLibrary(name: "COpenSSL", pkgConfig: "openssl", providers: [.apt(["libssl-dev"])]),
        // The executable's allocator (see docs/operations.md, "Memory allocator").
        .systemLibrary(name: "CJemalloc", pkgConfig: "jemalloc", providers: [.apt(["libjemalloc-dev"])]),
        // jemalloc's options, compiled into the executable (`malloc_conf`).
        .target(name: "CPushlineMallocConf"),

        .target(
            name: "PushlineTLS",
            dependencies: [
                "COpenSSL",
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: strict
        ),
        // Issues certificates (a CA, server and client certificates) for tests, the benchmarks and
        // the mock's self-signed identity; the production TLS module ships no CA.
        .target(name: "PushlineTestCA", dependencies: ["COpenSSL", "PushlineTLS"], swiftSettings: strict),
        .target(
            name: "PushlineHTTP2",
            dependencies: [
                "CNGHTTP2",
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: strict
        ),
        // The HTTP/2 server over the same nghttp2 session (`package` access to its internals): the
        // mock APNs server and the HTTP/2 tests use it; the client module does not ship it.
        .target(
            name: "PushlineHTTP2Server",
            dependencies: [
                "CNGHTTP2", "PushlineHTTP2",
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "PushlineKafka",
            dependencies: [
                "CRdKafka",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .target(name: "PushlineAPNSCore", swiftSettings: strict),
        .target(
            name: "PushlineAPNS",
            dependencies: [
                "PushlineAPNSCore", "PushlineTLS", "PushlineHTTP2",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "PushlineAPNSMock",
            dependencies: [
                "PushlineAPNSCore", "PushlineTLS", "PushlineTestCA", "PushlineHTTP2", "PushlineHTTP2Server",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "PushlineWorker",
            dependencies: [
                "PushlineKafka", "PushlineAPNS", "PushlineAPNSCore", "PushlineTLS",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "Yams", package: "Yams"),
            ],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "pushline",
            dependencies: [
                "PushlineWorker", "PushlineAPNSMock", "PushlineAPNSCore", "PushlineKafka", "PushlineTLS", "PushlineAPNS", "CJemalloc",
                "CPushlineMallocConf",
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),

        // librdkafka's mock cluster as a broker process (a second Kafka implementation for the local
        // stack: scripts/stack --broker librdkafka-mock). Here rather than in the bench package: it
        // needs CRdKafka's headers and the run-time librdkafka only, which this package already has.
        .target(name: "CPushlineMockKafka", dependencies: ["CRdKafka"]),
        .executableTarget(name: "pushline-mock-kafka", dependencies: ["CRdKafka", "CPushlineMockKafka"], swiftSettings: strict),

        // Helpers for tests only: the embedded broker, free ports, waiting with deadlines.
        .target(
            name: "PushlineTestSupport",
            dependencies: [
                "PushlineAPNSMock", "PushlineTLS", "PushlineHTTP2",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: strict
        ),

        .testTarget(
            name: "PushlineKafkaTests",
            dependencies: [
                "CRdKafka", "PushlineKafka", "PushlineTestSupport", "pushline-mock-kafka",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "PushlineTLSTests",
            dependencies: [
                "PushlineTLS", "PushlineTestCA", "PushlineTestSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "PushlineHTTP2Tests",
            dependencies: [
                "CNGHTTP2", "PushlineHTTP2", "PushlineHTTP2Server", "PushlineTLS", "PushlineTestSupport", "PushlineAPNSCore",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ],
            swiftSettings: strict
        ),
        .testTarget(name: "PushlineAPNSCoreTests", dependencies: ["PushlineAPNSCore"], swiftSettings: strict),
        .testTarget(
            name: "PushlineAPNSTests",
            dependencies: [
                "PushlineAPNS", "PushlineAPNSCore", "PushlineAPNSMock", "PushlineHTTP2", "PushlineHTTP2Server", "PushlineTLS",
                "PushlineTestCA", "PushlineTestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "PushlineAPNSMockTests",
            dependencies: [
                "PushlineAPNSMock", "PushlineAPNSCore", "PushlineHTTP2", "PushlineHTTP2Server", "PushlineTLS", "PushlineTestCA",
                "PushlineTestSupport",
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "PushlineWorkerTests",
            dependencies: [
                "PushlineWorker", "PushlineAPNS", "PushlineAPNSCore", "PushlineKafka", "PushlineTestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Yams", package: "Yams"),
            ],
            exclude: ["Corpus"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "IntegrationTests",
            dependencies: [
                "PushlineWorker", "PushlineKafka", "PushlineAPNSMock", "PushlineTestSupport", "PushlineTLS",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "DeployTests",
            dependencies: ["PushlineWorker", "PushlineAPNSCore", .product(name: "Yams", package: "Yams")],
            swiftSettings: strict
        ),
    ],
    swiftLanguageModes: [.v6]
)
