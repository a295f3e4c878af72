// swift-tools-version:6.1
// An application of Pushline's libraries, as another team would write it: it depends on the APNs
// client and the mock by version. CI builds it against a temporary clone of this repository tagged
// 0.1.0 (.ci/example-package); PUSHLINE_PACKAGE_URL names that clone. Without it, the repository
// around this folder is used, at its newest tag from 0.1.0 up.
import PackageDescription

let pushline = Context.environment["PUSHLINE_PACKAGE_URL"] ?? "file://\(Context.packageDirectory)/../.."

let package = Package(
    name: "SendToMock",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(url: pushline, from: "0.1.0")
    ],
    targets: [
        .target(
            name: "SendToMock",
            dependencies: [
                .product(name: "PushlineAPNS", package: "pushline"),
                .product(name: "PushlineAPNSCore", package: "pushline"),
                .product(name: "PushlineAPNSMock", package: "pushline"),
            ]
        ),
        .testTarget(
            name: "SendToMockTests",
            dependencies: [
                "SendToMock",
                .product(name: "PushlineAPNSCore", package: "pushline"),
                .product(name: "PushlineAPNSMock", package: "pushline"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
