import COpenSSL

/// One entry of OpenSSL's per-thread error queue, decoded into strings at the moment it was drained.
public struct OpenSSLErrorEntry: Sendable, Hashable, CustomStringConvertible {
    /// The packed OpenSSL error code (`ERR_get_error`).
    public var code: UInt
    /// The library that raised it, e.g. "SSL routines".
    public var library: String
    /// The reason, e.g. "certificate verify failed".
    public var reason: String
    /// Extra data OpenSSL attached (e.g. "calling fopen(x, rb)"), if any.
    public var data: String?
    /// Where in OpenSSL it was raised, "file:line (function)".
    public var location: String

    public var description: String {
        var text = "\(library): \(reason)"
        if let data, !data.isEmpty { text += " (\(data))" }
        return text
    }
}

/// Everything OpenSSL's error queue held when an operation failed, oldest first.
///
/// Every non-blocking call in this module clears the queue first, so the stack belongs to
/// that call only. An empty stack means OpenSSL reported failure without a reason.
public struct OpenSSLErrorStack: Error, Sendable, Hashable, CustomStringConvertible {
    public var entries: [OpenSSLErrorEntry]

    public init(entries: [OpenSSLErrorEntry]) {
        self.entries = entries
    }

    /// Drains the calling thread's error queue.
    static func drain() -> OpenSSLErrorStack {
        var entries: [OpenSSLErrorEntry] = []
        while true {
            var file: UnsafePointer<CChar>?
            var line: Int32 = 0
            var function: UnsafePointer<CChar>?
            var data: UnsafePointer<CChar>?
            var flags: Int32 = 0
            let code = ERR_get_error_all(&file, &line, &function, &data, &flags)
            if code == 0 { break }
            let library = ERR_lib_error_string(code).map { String(cString: $0) } ?? "lib(\(ERR_GET_LIB(code)))"
            let reason = ERR_reason_error_string(code).map { String(cString: $0) } ?? "reason(\(ERR_GET_REASON(code)))"
            let text = (flags & ERR_TXT_STRING) != 0 ? data.map { String(cString: $0) } : nil
            let location = "\(file.map { String(cString: $0) } ?? "?"):\(line) (\(function.map { String(cString: $0) } ?? "?"))"
            entries.append(OpenSSLErrorEntry(code: code, library: library, reason: reason, data: text, location: location))
        }
        return OpenSSLErrorStack(entries: entries)
    }

    /// Whether any entry's reason contains `text` (case-insensitive), for tests and diagnostics.
    public func contains(reason text: String) -> Bool {
        entries.contains { $0.reason.lowercased().contains(text.lowercased()) }
    }

    public var description: String {
        entries.isEmpty ? "no OpenSSL error recorded" : entries.map(\.description).joined(separator: "; ")
    }
}
