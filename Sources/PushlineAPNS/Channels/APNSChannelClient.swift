import Logging
import NIOCore
import NIOPosix
import PushlineAPNSCore
import PushlineHTTP2
import PushlineTLS
import Synchronization

/// A client of Apple's broadcast channel-management API for one app: one HTTP/2 connection over
/// TLS (through the app's proxy, if any) to the channel host, with the app's credential, carrying
/// one `APNSChannelOperation` at a time.
///
/// Built from the push pool's pieces: the same TLS context, provider tokens, CONNECT tunnel and
/// HTTP/2 client; only the requests differ. It has no pool: channel management is a handful of
/// requests (`pushline channels`), not traffic. It connects at the first request and keeps the
/// connection until `close()`.
public final class APNSChannelClient: Sendable {
    public let endpoint: APNSEndpoint
    public let bundleID: String
    private let proxy: APNSProxy?
    private let tlsContext: TLSContext
    private let tokens: ProviderTokenSource?
    private let requestTimeout: Duration
    private let connectTimeout: Duration
    private let eventLoop: any EventLoop
    private let ids = APNSIDGenerator()
    private let connection = Mutex<EventLoopFuture<HTTP2ClientConnection>?>(nil)

    /// - Parameters:
    ///   - endpoint: the channel host (`APNSEndpoint.productionChannels`, `.sandboxChannels`, or a mock).
    ///   - bundleID: the app whose channels are managed.
    ///   - group: where the connection lives (one event loop of it).
    public init(
        endpoint: APNSEndpoint,
        bundleID: String,
        credential: APNSCredential,
        proxy: APNSProxy? = nil,
        caFile: String? = nil,
        requestTimeout: Duration = .seconds(10),
        connectTimeout: Duration = .seconds(10),
        group: any EventLoopGroup,
        now: @escaping @Sendable () -> Int64 = APNSClientConfiguration.systemNow
    ) throws {
        self.endpoint = endpoint
        self.bundleID = bundleID
        self.proxy = proxy
        self.tlsContext = try TLSContext.apns(endpoint: endpoint, caFile: caFile, credential: credential)
        if case .token(let keyID, let teamID, let key) = credential {
            tokens = ProviderTokenSource(keyID: keyID, teamID: teamID, key: key, now: now) {}
        } else {
            tokens = nil
        }
        self.requestTimeout = requestTimeout
        self.connectTimeout = connectTimeout
        self.eventLoop = group.next()
    }

    /// Sends `operation` and returns APNs' answer (a refusal too); throws
    /// `APNSChannelClientError` when no answer came.
    public func perform(_ operation: APNSChannelOperation) async throws -> APNSChannelAnswer {
        let built = operation.request(bundleID: bundleID, requestID: ids.next())
        var headers = built.headers.map { HTTP2Header($0.name, $0.value, neverIndex: $0.indexing == .never) }
        if let tokens {
            do {
                headers.insert(HTTP2Header("authorization", try tokens.token().authorization, neverIndex: true), at: 0)
            } catch {
                throw APNSChannelClientError.providerToken("\(error)")
            }
        }
        let request = HTTP2Request(
            method: built.method,
            authority: endpoint.authority,
            path: built.path,
            headers: headers,
            body: built.body.map { ByteBuffer(bytes: $0) }
        )
        let connection: HTTP2ClientConnection
        do {
            connection = try await connected().get()
        } catch let error as APNSChannelClientError {
            throw error
        } catch {
            throw APNSChannelClientError.connection("\(endpoint)\(proxy.map { " through the proxy \($0)" } ?? ""): \(error)")
        }
        // The deadline closes the connection, which fails the request's stream.
        let timedOut = Atomic<Bool>(false)
        let channel = connection.channel
        let deadline = channel.eventLoop.scheduleTask(in: TimeAmount(requestTimeout)) {
            timedOut.store(true, ordering: .relaxed)
            channel.close(promise: nil)
        }
        defer { deadline.cancel() }
        let response: HTTP2Response
        do {
            response = try await connection.send(request).get()
        } catch {
            if timedOut.load(ordering: .relaxed) { throw APNSChannelClientError.timeout(requestTimeout) }
            throw APNSChannelClientError.stream("\(error)")
        }
        return APNSChannelAnswer(
            to: operation,
            status: response.status,
            channelIDHeader: response.headers.first(named: "apns-channel-id"),
            body: response.body.map { Array($0.readableBytesView) } ?? []
        )
    }

    /// Closes the connection, if one was made, politely: GOAWAY, then TCP once no stream is open
    /// (at most `requestTimeout` later).
    public func close() async {
        guard let future = connection.withLock({ $0 }) else { return }
        if let connection = try? await future.get() {
            try? await connection.closeGracefully(timeout: TimeAmount(requestTimeout)).get()
        }
    }

    /// The connection, made at the first call.
    private func connected() -> EventLoopFuture<HTTP2ClientConnection> {
        connection.withLock { existing in
            if let existing { return existing }
            let made = connect()
            existing = made
            return made
        }
    }

    private func connect() -> EventLoopFuture<HTTP2ClientConnection> {
        let promise = eventLoop.makePromise(of: HTTP2ClientConnection.self)
        let endpoint = self.endpoint
        let proxy = self.proxy
        let tlsContext = self.tlsContext
        APNSBootstrap(endpoint: endpoint, proxy: proxy, connectTimeout: connectTimeout).connect(
            on: eventLoop,
            protocols: {
                [try TLSHandler(context: tlsContext, serverHostname: endpoint.host), HTTP2ClientHandler()] as [any ChannelHandler]
            },
            tail: { ChannelClientReadiness(promise: promise, endpoint: endpoint) },
            failed: { proxy, error in promise.fail(APNSChannelClientError.connection("the proxy \(proxy): \(error)")) }
        ).whenFailure { error in promise.fail(error) }
        return promise.futureResult
    }
}

/// The tail of a channel-management connection: hands the connection over once TLS is up (the
/// HTTP/2 handler is in place then, through a proxy too), and otherwise fails it with the first
/// error the pipeline raised (a failed handshake, say) when the connection closes. Lives on the
/// channel's event loop; completing the promise again after the first time does nothing.
private final class ChannelClientReadiness: ChannelInboundHandler {
    typealias InboundIn = Never
    private let promise: EventLoopPromise<HTTP2ClientConnection>
    private let endpoint: APNSEndpoint
    private var firstError: (any Error)?

    init(promise: EventLoopPromise<HTTP2ClientConnection>, endpoint: APNSEndpoint) {
        self.promise = promise
        self.endpoint = endpoint
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .handshakeCompleted? = event as? TLSUserEvent {
            do {
                let handler = try context.pipeline.syncOperations.handler(type: HTTP2ClientHandler.self)
                promise.succeed(HTTP2ClientConnection(channel: context.channel, handler: handler))
            } catch {
                promise.fail(error)
            }
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if firstError == nil { firstError = error }
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        promise.fail(APNSChannelClientError.connection("\(endpoint): \(firstError.map { "\($0)" } ?? "closed before TLS was up")"))
        context.fireChannelInactive()
    }
}

@available(*, unavailable)
extension ChannelClientReadiness: Sendable {}
