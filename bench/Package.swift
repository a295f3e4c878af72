// swift-tools-version:6.1
// Benchmarks, kept out of the main package so `swift test` never builds them.
// Build: swift build -c release --package-path bench (scripts/bench does it).
import PackageDescription

let package = Package(
    name: "pushline-bench",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "pushline", path: ".."),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
    ],
    targets: [
        .executableTarget(
            name: "pushline-bench",
            dependencies: [
                .product(name: "PushlineTLS", package: "pushline"),
                .product(name: "PushlineTestCA", package: "pushline"),
                .product(name: "PushlineHTTP2", package: "pushline"),
                .product(name: "PushlineHTTP2Server", package: "pushline"),
                .product(name: "PushlineAPNSCore", package: "pushline"),
                .product(name: "PushlineAPNS", package: "pushline"),
                .product(name: "PushlineWorker", package: "pushline"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        )
    ],
    swiftLanguageModes: [.v6]
)
