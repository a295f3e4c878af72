// swift-tools-version:6.1
import PackageDescription

let strict: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "pushline",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "pushline", targets: ["pushline"]),
        .library(name: "Kafka", targets: ["Kafka"]),
        .library(name: "NIOOpenSSL", targets: ["NIOOpenSSL"]),
        .library(name: "NIONGHTTP2", targets: ["NIONGHTTP2"]),
        .library(name: "APNSCore", targets: ["APNSCore"]),
        .library(name: "Pushline", targets: ["Pushline"]),
        .library(name: "APNS", targets: ["APNS"]),
        .library(name: "APNSMock", targets: ["APNSMock"]),
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

        .target(
            name: "NIOOpenSSL",
            dependencies: [
                "COpenSSL",
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "NIONGHTTP2",
            dependencies: [
                "CNGHTTP2",
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "Kafka",
            dependencies: [
                "CRdKafka",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .target(name: "APNSCore", swiftSettings: strict),
        .target(
            name: "APNS",
            dependencies: [
                "APNSCore", "NIOOpenSSL", "NIONGHTTP2",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "APNSMock",
            dependencies: [
                "APNSCore", "NIOOpenSSL", "NIONGHTTP2",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "Pushline",
            dependencies: [
                "Kafka", "APNS", "APNSCore", "NIOOpenSSL",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
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
                "Pushline", "APNSMock", "APNSCore", "Kafka", "NIOOpenSSL", "APNS", "CJemalloc",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),

        // Helpers for tests only: the embedded broker, free ports, waiting with deadlines.
        .target(
            name: "PushlineTestSupport",
            dependencies: [
                "APNSMock", "NIOOpenSSL", "NIONGHTTP2",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: strict
        ),

        .testTarget(name: "KafkaTests", dependencies: ["Kafka", "PushlineTestSupport"], swiftSettings: strict),
        .testTarget(name: "NIOOpenSSLTests", dependencies: [
            "NIOOpenSSL", "PushlineTestSupport",
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOEmbedded", package: "swift-nio"),
        ], swiftSettings: strict),
        .testTarget(name: "NIONGHTTP2Tests", dependencies: [
            "NIONGHTTP2", "NIOOpenSSL", "PushlineTestSupport",
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOEmbedded", package: "swift-nio"),
        ], swiftSettings: strict),
        .testTarget(name: "APNSCoreTests", dependencies: ["APNSCore"], swiftSettings: strict),
        .testTarget(name: "APNSTests", dependencies: ["APNS", "APNSMock", "PushlineTestSupport"], swiftSettings: strict),
        .testTarget(name: "APNSMockTests", dependencies: ["APNSMock", "NIONGHTTP2", "NIOOpenSSL", "PushlineTestSupport"], swiftSettings: strict),
        .testTarget(name: "PushlineTests", dependencies: ["Pushline", "APNSCore"], swiftSettings: strict),
        .testTarget(name: "IntegrationTests", dependencies: ["Pushline", "Kafka", "APNSMock", "PushlineTestSupport"], swiftSettings: strict),
        .testTarget(name: "DeployTests", dependencies: ["Pushline", "APNSCore", .product(name: "Yams", package: "Yams")], swiftSettings: strict),
    ],
    swiftLanguageModes: [.v6]
)
