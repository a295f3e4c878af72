import CRdKafka
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The broker sockets of one client, created and closed through librdkafka's `socket_cb` and
/// `closesocket_cb`, so that `shutdownAll` can cut every connection at once.
///
/// Why: librdkafka waits `max.poll.interval.ms` + 3 s for a JoinGroup answer and will not send
/// another JoinGroup (nor act on an unsubscribe or subscribe: they are postponed "until the previous
/// rebalance completes") while one is outstanding. A connection that ends fails its outstanding
/// requests with `__TRANSPORT`, after which librdkafka joins again at once: the only way from the
/// public API to abandon a JoinGroup the coordinator never answers (`StalledJoin`).
final class RDKafkaSockets: Sendable {
    /// Open sockets. `close` happens under this lock too, so `shutdownAll` never reaches a number
    /// that was closed and reused for another file.
    private let open = Mutex<Set<Int32>>([])

    /// Half-closes every open socket (`shutdown`, not `close`: librdkafka still owns them and
    /// closes them through `closesocket_cb` when it sees the end). Returns how many.
    func shutdownAll() -> Int {
        open.withLock { sockets in
            for socket in sockets { _ = shutdown(socket, Int32(SHUT_RDWR)) }
            return sockets.count
        }
    }

    /// Installs the callbacks on `conf`; the conf opaque must be the `RDKafkaCallbacks` that holds
    /// `self`.
    static func install(on conf: OpaquePointer) {
        rd_kafka_conf_set_socket_cb(conf, rdkafkaSocketCallback)
        rd_kafka_conf_set_closesocket_cb(conf, rdkafkaCloseSocketCallback)
    }

    fileprivate func opened(_ socket: Int32) {
        open.withLock { _ = $0.insert(socket) }
    }

    fileprivate func close(_ socket: Int32) -> Int32 {
        open.withLock { sockets in
            sockets.remove(socket)
            #if canImport(Glibc)
            return Glibc.close(socket) == 0 ? 0 : errno
            #else
            return Darwin.close(socket) == 0 ? 0 : errno
            #endif
        }
    }
}

/// librdkafka's socket_cb: what its default does (close-on-exec), plus bookkeeping. Returns the
/// socket, or -1 with errno set.
private func rdkafkaSocketCallback(domain: Int32, type: Int32, protocol: Int32, opaque: UnsafeMutableRawPointer?) -> Int32 {
    #if os(Linux)
    let socket = Glibc.socket(domain, type | Int32(SOCK_CLOEXEC.rawValue), `protocol`)
    #else
    let socket = Darwin.socket(domain, type, `protocol`)
    if socket >= 0 { _ = fcntl(socket, F_SETFD, FD_CLOEXEC) }
    #endif
    if socket >= 0 { RDKafkaCallbacks.from(opaque)?.sockets.opened(socket) }
    return socket
}

/// librdkafka's closesocket_cb: the callback replaces librdkafka's own close. Returns 0 or errno.
private func rdkafkaCloseSocketCallback(socket: Int32, opaque: UnsafeMutableRawPointer?) -> Int32 {
    guard let sockets = RDKafkaCallbacks.from(opaque)?.sockets else {
        #if canImport(Glibc)
        return Glibc.close(socket) == 0 ? 0 : errno
        #else
        return Darwin.close(socket) == 0 ? 0 : errno
        #endif
    }
    return sockets.close(socket)
}
