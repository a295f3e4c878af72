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

    static func readLines(_ path: String) throws -> [String] {
        guard let file = fopen(path, "r") else {
            throw Failure(description: "cannot read '\(path)': \(String(cString: strerror(errno)))")
        }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = fread(&chunk, 1, chunk.count, file)
            if n == 0 { break }
            bytes.append(contentsOf: chunk[0..<n])
        }
        return String(decoding: bytes, as: UTF8.self).split(whereSeparator: \.isNewline).map {
            String($0).trimmingSpaces()
        }.filter { !$0.isEmpty && !$0.hasPrefix("#") }
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
