import Logging

/// The librdkafka version in use at run time (which may differ from the headers built against).
public struct LibrdkafkaVersion: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// librdkafka's hex encoding: 0xMMmmrrxx (major, minor, revision, pre-release).
    public var hex: Int32

    public init(hex: Int32) { self.hex = hex }

    public static var runtime: LibrdkafkaVersion { LibrdkafkaVersion(hex: RDKafkaVersion.hex) }
    public static var runtimeString: String { RDKafkaVersion.string }

    public var major: Int { Int((hex >> 24) & 0xff) }
    public var minor: Int { Int((hex >> 16) & 0xff) }
    public var revision: Int { Int((hex >> 8) & 0xff) }
    public var description: String { "\(major).\(minor).\(revision)" }

    public static func < (lhs: Self, rhs: Self) -> Bool {
        (lhs.major, lhs.minor, lhs.revision) < (rhs.major, rhs.minor, rhs.revision)
    }

    static let minimumSupported = LibrdkafkaVersion(hex: 0x0202_00ff)
    static let kafka4JoinGroup = LibrdkafkaVersion(hex: 0x020b_00ff)

    /// Warnings about this version, for operators.
    public var warnings: [String] {
        var result: [String] = []
        if self < Self.minimumSupported {
            result.append(
                "librdkafka \(self) is older than 2.2.0: cooperative rebalancing and idempotence fixes are missing; install a current librdkafka"
            )
        }
        if self < Self.kafka4JoinGroup {
            result.append(
                "librdkafka \(self) is older than 2.11: Kafka 4.0 brokers refuse its JoinGroup v0 requests, so consumer groups cannot join them"
            )
        }
        return result
    }

    /// Logs the runtime version at start, and a warning for each known problem.
    static func logRuntime(to logger: Logger, client: String) {
        let version = runtime
        logger.info("librdkafka \(runtimeString)", metadata: ["kafka.client": "\(client)"])
        for warning in version.warnings {
            logger.warning("\(warning)", metadata: ["kafka.client": "\(client)"])
        }
    }
}
