#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The few file operations the mock needs, without Foundation.
enum FileSystem {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    static func createDirectory(_ path: String) throws {
        var current = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            current += "/" + component
            if mkdir(current, 0o755) != 0 && errno != EEXIST {
                throw Failure(description: "cannot create directory '\(current)': \(String(cString: strerror(errno)))")
            }
        }
    }

    /// Writes `text` to `path` atomically (temporary file + rename) with `mode`.
    static func write(_ text: String, to path: String, mode: mode_t) throws {
        let temporary = path + ".tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC, mode)
        guard fd >= 0 else {
            throw Failure(description: "cannot write '\(path)': \(String(cString: strerror(errno)))")
        }
        var bytes = Array(text.utf8)
        var written = 0
        while written < bytes.count {
            let n = bytes.withUnsafeMutableBytes { Glibc.write(fd, $0.baseAddress! + written, $0.count - written) }
            if n < 0 {
                if errno == EINTR { continue }
                close(fd)
                throw Failure(description: "cannot write '\(path)': \(String(cString: strerror(errno)))")
            }
            written += n
        }
        fchmod(fd, mode)
        close(fd)
        bytes.removeAll()
        guard rename(temporary, path) == 0 else {
            throw Failure(description: "cannot rename to '\(path)': \(String(cString: strerror(errno)))")
        }
    }
}

extension String {
    func trimmingSpaces() -> String {
        var scalars = Substring(self)
        while let first = scalars.first, first == " " || first == "\t" || first == "\r" { scalars.removeFirst() }
        while let last = scalars.last, last == " " || last == "\t" || last == "\r" { scalars.removeLast() }
        return String(scalars)
    }
}
