import NIOCore
import PushlineAPNSCore

/// The streams a connection has sent, oldest first, for its deadline sweep.
///
/// Every request on a connection gets the same timeout, so send order is deadline order: the
/// sweep looks only at the front, and finds what expired without scanning what is in flight.
/// Entries are stream ids of this connection (never reused), not requests: whether a stream is
/// still open is asked of the connection's own HTTP/2 handler, so the sweep never reads a request
/// that another event loop may own by then. Entries of streams that ended are dropped when they
/// reach the front. A value confined to its connection's event loop.
struct SendOrder {
    private struct Entry {
        let streamID: Int32
        let deadline: MonotonicInstant
    }

    private var entries = CircularBuffer<Entry>(initialCapacity: 1024)

    var count: Int { entries.count }

    /// Records that a stream went out with this deadline.
    mutating func append(streamID: Int32, deadline: MonotonicInstant) {
        entries.append(Entry(streamID: streamID, deadline: deadline))
    }

    /// Removes and returns the ids of the streams still open (per `isOpen`) whose deadline is at
    /// or before `now`, and drops entries of streams that ended.
    mutating func expired(now: MonotonicInstant, isOpen: (Int32) -> Bool) -> [Int32] {
        var expired: [Int32] = []
        while let first = entries.first {
            if isOpen(first.streamID) {
                guard first.deadline <= now else { break }
                expired.append(first.streamID)
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
