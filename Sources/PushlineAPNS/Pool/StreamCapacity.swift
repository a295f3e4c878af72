/// How many more streams one connection may open right now: a pure value the pool consults
/// before every send, so no request ever waits inside a throttled connection.
///
/// capacity = min(peer SETTINGS_MAX_CONCURRENT_STREAMS, configured cap, 1 until the first success
/// on a token-auth connection) - streams reserved. A stream is reserved from the moment the pool
/// picks the connection until its stream closes, so requests in transit to the event loop count.
public struct StreamCapacity: Sendable, Hashable {
    /// The server's latest SETTINGS_MAX_CONCURRENT_STREAMS (HTTP/2 default: unlimited; APNs sends
    /// a value in its first SETTINGS, before which nothing is sent).
    public private(set) var peerLimit: Int
    public let configuredCap: Int
    /// Whether the connection has proven its credentials yet.
    public enum Phase: Sendable, Hashable {
        /// Token auth, nothing succeeded yet: one request at a time (APNs advertises 1 until then).
        case probing
        /// A request succeeded (or certificate auth): the limits alone decide.
        case proven
    }

    public private(set) var phase: Phase
    public private(set) var reserved = 0

    public init(configuredCap: Int, tokenAuth: Bool, peerLimit: Int = 1) {
        self.configuredCap = max(1, configuredCap)
        self.phase = tokenAuth ? .probing : .proven
        self.peerLimit = peerLimit
    }

    /// Token-auth connections carry one request until one succeeds.
    public var probing: Bool { phase == .probing }

    /// The limit in force now.
    public var limit: Int {
        min(peerLimit, configuredCap, probing ? 1 : Int.max)
    }

    /// Streams that may still be opened.
    public var available: Int {
        max(0, limit - reserved)
    }

    /// The server sent SETTINGS_MAX_CONCURRENT_STREAMS.
    public mutating func peerLimitChanged(_ value: Int) {
        peerLimit = max(0, value)
    }

    /// Takes a slot; returns false (and takes nothing) when none is free.
    public mutating func reserve() -> Bool {
        guard available > 0 else { return false }
        reserved += 1
        return true
    }

    /// A reserved stream closed (answered, reset, refused, or failed).
    public mutating func release() {
        precondition(reserved > 0, "released a stream that was never reserved")
        reserved -= 1
    }

    /// A new connection in this slot: back to the assumed limit of 1 (and probing with token auth)
    /// until its server's SETTINGS arrive. Reservations in transit stay counted.
    public mutating func reconnected(tokenAuth: Bool) {
        peerLimit = 1
        phase = tokenAuth ? .probing : .proven
    }

    /// A request on this connection succeeded: the probing phase is over.
    public mutating func succeeded() {
        phase = .proven
    }
}
