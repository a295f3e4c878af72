import COpenSSL

/// A memory BIO for encoding and decoding PEM/DER outside the TLS hot path.
/// Owns the `BIO*` and frees it in deinit.
final class MemoryBIO {
    let bio: OpaquePointer

    /// An empty, writable BIO.
    init() throws {
        guard let bio = BIO_new(BIO_s_mem()) else {
            throw CryptoError.openSSL(.generation, "cannot allocate a memory BIO")
        }
        self.bio = bio
    }

    /// A BIO holding a copy of `bytes`, to read from.
    init(copying bytes: [UInt8]) throws {
        guard let bio = BIO_new(BIO_s_mem()) else {
            throw CryptoError.openSSL(.generation, "cannot allocate a memory BIO")
        }
        self.bio = bio
        let written = bytes.withUnsafeBytes { BIO_write(bio, $0.baseAddress, Int32($0.count)) }
        guard written == bytes.count || bytes.isEmpty else {
            throw CryptoError.openSSL(.generation, "cannot fill a memory BIO")
        }
    }

    /// Everything written to the BIO so far.
    var bytes: [UInt8] {
        var data: UnsafeMutablePointer<CChar>?
        let count = pushline_BIO_get_mem_data(bio, &data)
        guard count > 0, let data else { return [] }
        return data.withMemoryRebound(to: UInt8.self, capacity: count) {
            Array(UnsafeBufferPointer(start: $0, count: count))
        }
    }

    deinit {
        BIO_free(bio)
    }
}
