import COpenSSL

/// SHA-256 (FIPS 180-4) of a byte string, by OpenSSL's one-shot digest: for values that must be
/// the same in every process and version (the derived collapse id, `DerivedCollapseID`), which
/// Swift's `Hasher` (seeded per process) is not.
public enum SHA256Digest {
    /// The digest's length in bytes.
    public static let length = 32

    /// The 32-byte digest of `bytes`.
    public static func hash(_ bytes: some Collection<UInt8>) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: length)
        let done =
            bytes.withContiguousStorageIfAvailable { hash($0, into: &digest) }
            ?? Array(bytes).withUnsafeBufferPointer { hash($0, into: &digest) }
        // EVP_Digest fails only when OpenSSL cannot allocate or SHA-256 is missing from the build.
        precondition(done, "OpenSSL's SHA-256 failed")
        return digest
    }

    private static func hash(_ bytes: UnsafeBufferPointer<UInt8>, into digest: inout [UInt8]) -> Bool {
        digest.withUnsafeMutableBufferPointer { out in
            // A one-shot digest: no context outlives the call.
            EVP_Digest(bytes.baseAddress, bytes.count, out.baseAddress, nil, EVP_sha256(), nil) == 1
        }
    }
}
