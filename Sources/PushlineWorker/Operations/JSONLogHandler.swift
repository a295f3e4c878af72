import Foundation
import Logging
import PushlineAPNSCore
import Synchronization

/// A swift-log handler writing one JSON object per line to standard error:
/// `{"ts":"...","level":"info","label":"...","msg":"...",<metadata>}`.
public struct JSONLogHandler: LogHandler {
    public var logLevel: Logger.Level = .info
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    private let label: String

    private static let output = Mutex<FileHandle>(FileHandle.standardError)

    public init(label: String) {
        self.label = label
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var line = "{\"ts\":\"" + Self.timestamp() + "\",\"level\":\"" + event.level.rawValue + "\",\"label\":"
        line += Self.quoted(label) + ",\"msg\":" + Self.quoted("\(event.message)")
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { _, new in new } }
        if let extra = event.metadata { merged.merge(extra) { _, new in new } }
        for (key, value) in merged.sorted(by: { $0.key < $1.key }) {
            line += "," + Self.quoted(key) + ":" + Self.quoted("\(value)")
        }
        line += "}\n"
        let data = Data(line.utf8)
        Self.output.withLock { $0.write(data) }
    }

    static func timestamp() -> String {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        var time = tm()
        var seconds = spec.tv_sec
        gmtime_r(&seconds, &time)
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
            time.tm_year + 1900,
            time.tm_mon + 1,
            time.tm_mday,
            time.tm_hour,
            time.tm_min,
            time.tm_sec,
            Int(spec.tv_nsec / 1_000_000)
        )
    }

    static func quoted(_ text: String) -> String {
        JSONString.quoted(text)
    }
}

/// Sets up swift-log once per process: JSON lines, or plain text on a terminal (`auto`).
public enum PushlineLogging {
    private static let bootstrapped = Mutex(false)

    public static func bootstrap(level: String, format: String) {
        let first = bootstrapped.withLock { done -> Bool in
            defer { done = true }
            return !done
        }
        guard first else { return }
        let logLevel = Logger.Level(rawValue: level) ?? .info
        let useJSON = format == "json" || (format == "auto" && isatty(STDERR_FILENO) == 0)
        LoggingSystem.bootstrap { label in
            var handler: any LogHandler = useJSON ? JSONLogHandler(label: label) : StreamLogHandler.standardError(label: label)
            handler.logLevel = logLevel
            return handler
        }
    }
}
