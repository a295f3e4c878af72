import Dispatch
import Foundation

/// Delivers SIGTERM, SIGINT and SIGUSR1 as an async sequence (the signals are ignored by the
/// default handlers while it exists).
final class SignalWaiter {
    let events: AsyncStream<Int32>
    private let sources: [any DispatchSourceSignal]

    init(signals: [Int32] = [SIGTERM, SIGINT, SIGUSR1]) {
        let (stream, continuation) = AsyncStream<Int32>.makeStream()
        var sources: [any DispatchSourceSignal] = []
        // A source registers asynchronously; until it has, a signal that SIG_IGN already covers
        // is dropped. Returning only once every source is registered means a signal sent after
        // this init (for instance right after the mock says it listens) is never lost.
        let registered = DispatchGroup()
        for number in signals {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { continuation.yield(number) }
            registered.enter()
            source.setRegistrationHandler { registered.leave() }
            source.resume()
            sources.append(source)
        }
        _ = registered.wait(timeout: .now() + .seconds(5))
        self.events = stream
        self.sources = sources
    }

    deinit {
        for source in sources { source.cancel() }
    }
}
