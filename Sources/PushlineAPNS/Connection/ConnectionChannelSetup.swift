import NIOCore
import PushlineHTTP2

/// Opens the channel a pooled connection runs on: the seam between a connection's behaviour
/// (`PooledConnection`) and how its bytes reach the server (TCP, a proxy's tunnel, TLS), so the
/// behaviour can be driven on a plain channel in tests (`EmbeddedChannel`, no TLS).
///
/// Called once per connection attempt, on the connection's event loop.
protocol ConnectionChannelSetup: Sendable {
    /// Where the connection goes, for log lines.
    var target: String { get }

    /// Opens a channel on `connection.eventLoop` whose pipeline ends with
    /// `ConnectionEvents(connection:)`, and puts `connection.makeHTTP2Handler()` into it once bytes
    /// may flow to the server (at once, or when a proxy's tunnel is open: then it tells
    /// `connection.installed(_:)`). A failure after the channel connected (a proxy refusing the
    /// tunnel) is told to `connection.setupFailed(_:)`.
    func connect(_ connection: PooledConnection) -> EventLoopFuture<any Channel>
}
