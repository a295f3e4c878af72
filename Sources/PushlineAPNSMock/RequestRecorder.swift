import PushlineAPNSCore
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `--record FILE`: one JSON line per request, buffered and appended in large writes so recording
/// does not slow the mock down.
final class RequestRecorder: Sendable {
    private let fd: Int32
    private let buffer = Mutex<[UInt8]>([])
    private static let flushThreshold = 256 * 1024

    init(path: String) throws {
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0o644)
        guard fd >= 0 else {
            throw FileSystem.Failure(description: "cannot open '\(path)' for recording: \(String(cString: strerror(errno)))")
        }
    }

    struct Entry {
        var connection: Int
        var stream: Int32
        var token: String
        var headers: [(String, String)]
        /// The regular headers' names (`authorization` included) that came as literals never
        /// indexed (HPACK), in the order received.
        var neverIndexed: [String]
        var payloadBytes: Int
        /// The request body as text (a JSON string in the line, so that any body can be recorded).
        var payload: String
        var status: Int
        var reason: String?
        /// When the request arrived and when it was answered (unix milliseconds, wall clock).
        var receivedMilliseconds: Int64
        var answeredMilliseconds: Int64
    }

    /// The wall clock in unix milliseconds.
    static func nowMilliseconds() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Int64(time.tv_sec) * 1000 + Int64(time.tv_nsec) / 1_000_000
    }

    func record(_ entry: Entry) {
        var line = "{\"connection\":\(entry.connection),\"stream\":\(entry.stream),\"token\":\(Self.quoted(entry.token)),"
        line += "\"headers\":{"
        line += entry.headers.map { "\(Self.quoted($0.0)):\(Self.quoted($0.1))" }.joined(separator: ",")
        line += "},\"never_indexed\":["
        line += entry.neverIndexed.map(Self.quoted).joined(separator: ",")
        line += "],\"payload_bytes\":\(entry.payloadBytes),\"payload\":\(Self.quoted(entry.payload)),\"status\":\(entry.status),\"reason\":"
        line += entry.reason.map(Self.quoted) ?? "null"
        line += ",\"received_ms\":\(entry.receivedMilliseconds),\"answered_ms\":\(entry.answeredMilliseconds)}\n"
        let pending: [UInt8]? = buffer.withLock { buffer in
            buffer.append(contentsOf: line.utf8)
            guard buffer.count >= Self.flushThreshold else { return nil }
            defer { buffer.removeAll(keepingCapacity: true) }
            return buffer
        }
        if let pending { append(pending) }
    }

    func flush() {
        let pending = buffer.withLock { buffer in
            defer { buffer.removeAll(keepingCapacity: true) }
            return buffer
        }
        if !pending.isEmpty { append(pending) }
    }

    private func append(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let n = write(fd, raw.baseAddress! + offset, raw.count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    return
                }
                offset += n
            }
        }
    }

    static func quoted(_ text: String) -> String {
        JSONString.quoted(text)
    }

    deinit {
        flush()
        close(fd)
    }
}
