#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Whole-file reads and writes for key and certificate files, with errors that name the file.
enum FileBytes {
    static func read(_ path: String) throws -> [UInt8] {
        guard let file = fopen(path, "rb") else {
            throw CryptoError(.fileAccess, "cannot read '\(path)': \(String(cString: strerror(errno)))")
        }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16384)
        while true {
            let count = chunk.withUnsafeMutableBytes { fread($0.baseAddress, 1, $0.count, file) }
            if count > 0 { bytes.append(contentsOf: chunk[0..<count]) }
            if count < chunk.count {
                if ferror(file) != 0 {
                    throw CryptoError(.fileAccess, "cannot read '\(path)': \(String(cString: strerror(errno)))")
                }
                return bytes
            }
        }
    }

    /// Writes `bytes` to `path`, replacing it; `mode` applies when the file is created
    /// (private keys use 0o600 so they are never world-readable, not even briefly).
    static func write(_ bytes: [UInt8], to path: String, mode: mode_t = 0o644) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode)
        guard fd >= 0 else {
            throw CryptoError(.fileAccess, "cannot write '\(path)': \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { systemWrite(fd, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 {
                if errno == EINTR { continue }
                throw CryptoError(.fileAccess, "cannot write '\(path)': \(String(cString: strerror(errno)))")
            }
            offset += written
        }
    }
}

/// `write(2)`, named apart from `FileBytes.write`.
private func systemWrite(_ fd: Int32, _ pointer: UnsafeRawPointer, _ count: Int) -> Int {
    write(fd, pointer, count)
}
