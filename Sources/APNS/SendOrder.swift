import NIOCore

/// The requests a connection has sent, oldest first, for its deadline sweep.
///
/// Every request on a connection gets the same timeout, so send order is deadline order: the
/// sweep looks only at the front, and finds what expired without scanning what is in flight.
/// Entries of requests that already ended (answered, or resent elsewhere) are dropped when they
/// reach the front, so the buffer holds what was sent within about one timeout of its oldest
/// live request. A value confined to its connection's event loop.
struct SendOrder {
    private struct Entry {
        let request: PendingRequest
        let streamID: Int32
        let deadline: ContinuousClock.Instant
        /// `request.sends` when this entry was made: a later send of the request makes it stale.
        let send: Int
    }

    private var entries = CircularBuffer<Entry>(initialCapacity: 1024)

    var count: Int { entries.count }

    /// Records that `request` went out on `streamID` (after `request.sends` was counted up).
    mutating func append(_ request: PendingRequest, streamID: Int32, deadline: ContinuousClock.Instant) {
        entries.append(Entry(request: request, streamID: streamID, deadline: deadline, send: request.sends))
    }

    /// Removes and returns the requests still open on their stream whose deadline is at or
    /// before `now`, and drops entries of requests that ended.
    mutating func expired(now: ContinuousClock.Instant) -> [(streamID: Int32, request: PendingRequest)] {
        var expired: [(streamID: Int32, request: PendingRequest)] = []
        while let first = entries.first {
            let isOpen = first.request.streamID == first.streamID && first.request.sends == first.send
            if isOpen {
                guard first.deadline <= now else { break }
                expired.append((first.streamID, first.request))
            }
            entries.removeFirst()
        }
        return expired
    }

    /// Forgets everything (the connection closed: its streams have all ended).
    mutating func removeAll() {
        entries.removeAll()
    }
}
