import PushlineAPNSCore
import PushlineTLS

/// The `apns-collapse-id` a job without its own is sent with (`worker.collapse_duplicates`, on by
/// default), so that a redelivered job's notification replaces its first copy on the device
/// instead of showing twice (docs/records.md, "The derived collapse id").
///
/// The rule, the same in every process and version: the job's `id` itself when it is a valid
/// collapse id (at most 64 bytes, and a valid HTTP/2 field value: `HTTPFieldValue`), else
/// `pl-` followed by the first 16 bytes of the SHA-256 of the id's UTF-8 bytes in lowercase hex
/// (35 bytes). Derived once per job, at decoding (`JobDecoder`): a request pays nothing for it.
enum DerivedCollapseID {
    /// What starts a hashed id.
    static let hashPrefix = "pl-"
    /// How many bytes of the SHA-256 the hashed form keeps (128 bits).
    static let hashBytes = 16

    /// The collapse id derived from the job id `id`.
    static func of(jobID id: String) -> String {
        let count = id.utf8.count
        if count >= 1, count <= APNSRequestRules.maxCollapseIDBytes, HTTPFieldValue.problem(id) == nil {
            return id
        }
        let digest = SHA256Digest.hash(id.utf8)
        let hex: [UInt8] = Array("0123456789abcdef".utf8)
        var text = Array(hashPrefix.utf8)
        text.reserveCapacity(text.count + 2 * hashBytes)
        for byte in digest.prefix(hashBytes) {
            text.append(hex[Int(byte >> 4)])
            text.append(hex[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
