/// Why a job record was rejected: a stable code for machines and a detail for people.
///
/// The `rejected` result record carries `"<code>: <detail>"` in its `error` field, and the
/// dead-letter copy carries the same text in its `pushline-error` header.
public struct JobRejection: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Code: String, Sendable, Hashable {
        case recordTooLarge = "record_too_large"
        case invalidJSON = "invalid_json"
        case notAnObject = "not_an_object"
        case missingField = "missing_field"
        case invalidField = "invalid_field"
        case duplicateField = "duplicate_field"
        case unknownApp = "unknown_app"
        case payloadTooLarge = "payload_too_large"
    }

    public var code: Code
    public var detail: String
    /// The job id, when it could be read before the problem was found.
    public var jobID: String?
    /// What the job's records echo (`campaign`, `meta`), as far as the id and valid fields of
    /// it could be read before the problem was found: the `rejected` record carries it like every
    /// other record of the job (`JobDecoder.decodeEcho`).
    public var echo: JobEcho

    public init(_ code: Code, _ detail: String, jobID: String? = nil, echo: JobEcho = .none) {
        self.code = code
        self.detail = detail
        self.jobID = jobID
        self.echo = echo
    }

    public var description: String { "\(code.rawValue): \(detail)" }
}
