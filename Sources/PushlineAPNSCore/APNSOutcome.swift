/// The final word on one notification: APNs' answer, or why none came.
public struct APNSOutcome: Sendable, Hashable {
    /// Why no response was received (status 0 in result records).
    public enum NoResponse: String, Sendable, Hashable {
        /// The local request deadline passed; the stream was reset. APNs may still have delivered it.
        case timeout
        /// The connection failed with the request in flight, or none could be made.
        case connection
        /// The job's deadline or expiration passed before it could be (re)sent.
        case expired
        /// The server refused the request as malformed: it reset the request's stream with the
        /// HTTP/2 error PROTOCOL_ERROR, or ended connections with such an error while the request
        /// was the one suspect in flight (docs/apns.md). The same bytes would be refused again.
        case protocolError = "protocol_error"
        /// The pool shut down before a final answer. Not final: the worker publishes nothing for
        /// it and leaves the job uncommitted, so the group's next owner sends it again.
        case shutdown
        /// Withdrawn before it was sent: its owner gave the work up (the worker: the job's Kafka
        /// partition went to another member, which sends it). Not final, like `shutdown`.
        case withdrawn
        /// Never sent, or not sent again: its campaign (or job) was cancelled. Final.
        case cancelled
        /// Never sent: a dry run (the job's `dry_run`, or the worker's) validates and renders but
        /// sends nothing. Final.
        case dryRun = "dry_run"
        /// Never sent: the token's personalised payload names a variable the token does not give
        /// and the placeholder has no default. Final; the job's other tokens go out.
        case missingVariable = "missing_variable"
        /// Never sent: the token's personalised payload, rendered, is over APNs' size limit
        /// (4096 bytes, 5120 for voip). Final; the job's other tokens go out.
        case payloadTooLarge = "payload_too_large"
    }

    /// APNs' response, or nil when none was received.
    public var response: APNSResponse?
    /// Set when `response` is nil.
    public var noResponse: NoResponse?
    /// Attempts that counted (resends after REFUSED_STREAM or GOAWAY do not count).
    public var attempts: Int
    /// From the first send to the final answer, in milliseconds.
    public var latencyMilliseconds: Double
    /// How long the notification waited while its app was held after systemic answers
    /// (docs/apns.md, "Systemic faults"); nil when it never was.
    public var heldMilliseconds: Double?

    public init(response: APNSResponse, attempts: Int, latencyMilliseconds: Double) {
        self.response = response
        self.noResponse = nil
        self.attempts = attempts
        self.latencyMilliseconds = latencyMilliseconds
    }

    public init(noResponse: NoResponse, attempts: Int, latencyMilliseconds: Double) {
        self.response = nil
        self.noResponse = noResponse
        self.attempts = attempts
        self.latencyMilliseconds = latencyMilliseconds
    }

    /// The HTTP status, 0 when no response was received.
    public var status: Int { response?.status ?? 0 }

    /// APNs' reason string, or the no-response reason (`timeout`, `connection`, `expired`,
    /// `protocol_error`, `cancelled`, `dry_run`, `missing_variable`, `payload_too_large`).
    public var reasonString: String? {
        if let response { return response.reason?.rawValue }
        return noResponse?.rawValue
    }

    public var disposition: APNSDisposition {
        if let response { return APNSDisposition(response) }
        switch noResponse {
        case .expired, .shutdown, .withdrawn: return .retryable(.expired)
        case .protocolError, .cancelled, .dryRun, .missingVariable, .payloadTooLarge: return .permanent
        case .timeout, .connection, nil: return .retryable(.transport)
        }
    }
}
