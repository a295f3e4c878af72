import CoreMetrics
import Prometheus
import PushlineAPNS
import Synchronization

/// A Prometheus histogram of durations that records with three relaxed atomic adds and no lock.
///
/// The worker records three or four durations per notification (APNs latency, end-to-end latency,
/// lane queue delay, and per job the result age). swift-prometheus's histogram takes a lock and
/// compares the value with every bucket bound as a `Duration` on each record; at 100,000
/// notifications a second that was about 2% of the worker's CPU. Here a record finds its one
/// bucket among the bounds in nanoseconds and adds to it, to the sum and nothing else; the
/// cumulative counts are made when scraped. The exposition is byte for byte what swift-prometheus
/// writes for the same name, labels, bounds and values (`AtomicTimerHistogramTests`).
///
/// A scrape reads the counters one by one while records go on, so `_sum` may include a record
/// the buckets do not yet show; `_count` is always the `+Inf` bucket.
final class AtomicTimerHistogram: BucketedTimerHandler, @unchecked Sendable {
    // @unchecked Sendable: the bounds and labels are immutable, and the counters are atomics in
    // storage this object allocates in init and frees in deinit.
    let name: String
    let labels: [(String, String)]
    private let bounds: [Int64]
    private let boundTexts: [String]
    private let renderedLabels: [UInt8]
    /// One counter per bound, then one for values above every bound.
    private let counts: UnsafeMutablePointer<Atomic<Int>>
    private let sumNanoseconds = Atomic<Int64>(0)

    init(name: String, labels: [(String, String)], buckets: [Duration]) {
        self.name = name
        self.labels = labels
        let sorted = buckets.sorted()
        bounds = sorted.map { Self.nanoseconds($0) }
        boundTexts = sorted.map(\.bucketRepresentation)
        renderedLabels = Self.render(labels)
        counts = .allocate(capacity: sorted.count + 1)
        for index in 0...sorted.count { (counts + index).initialize(to: Atomic(0)) }
    }

    deinit {
        counts.deinitialize(count: bounds.count + 1)
        counts.deallocate()
    }

    func recordNanoseconds(_ duration: Int64) {
        counts[bucket(of: duration)].wrappingAdd(1, ordering: .relaxed)
        sumNanoseconds.wrappingAdd(duration, ordering: .relaxed)
    }

    /// The bounds in nanoseconds (`BucketedTimerHandler`: a tally searches them itself).
    var bucketBounds: [Int64] { bounds }

    /// The bucket of a value: the first bound at or above it (Prometheus buckets are
    /// upper-inclusive), or the last counter when it is above every bound.
    private func bucket(of duration: Int64) -> Int {
        bounds.withUnsafeBufferPointer { HistogramBuckets.index(of: duration, in: $0) }
    }

    /// Adds values counted elsewhere (`TimerTally`): `counts[i]` values in bucket `i`, summing to
    /// `sumNanoseconds`. One atomic add per bucket that has any.
    func add(counts added: UnsafeBufferPointer<Int>, sumNanoseconds sum: Int64) {
        for index in added.indices where added[index] != 0 {
            counts[index].wrappingAdd(added[index], ordering: .relaxed)
        }
        sumNanoseconds.wrappingAdd(sum, ordering: .relaxed)
    }

    /// This series' lines (no `# TYPE` line: the family writes it once).
    func emit(into buffer: inout [UInt8]) {
        var cumulative = 0
        for index in bounds.indices {
            cumulative += counts[index].load(ordering: .relaxed)
            line(&buffer, suffix: "_bucket", le: boundTexts[index], value: String(cumulative))
        }
        cumulative += counts[bounds.count].load(ordering: .relaxed)
        line(&buffer, suffix: "_bucket", le: "+Inf", value: String(cumulative))
        let sum = Duration.nanoseconds(sumNanoseconds.load(ordering: .relaxed))
        line(&buffer, suffix: "_sum", le: nil, value: sum.bucketRepresentation)
        line(&buffer, suffix: "_count", le: nil, value: String(cumulative))
    }

    private func line(_ buffer: inout [UInt8], suffix: String, le: String?, value: String) {
        buffer.append(contentsOf: name.utf8)
        buffer.append(contentsOf: suffix.utf8)
        switch (renderedLabels.isEmpty, le) {
        case (true, nil):
            buffer.append(UInt8(ascii: " "))
        case (false, nil):
            buffer.append(UInt8(ascii: "{"))
            buffer.append(contentsOf: renderedLabels)
            buffer.append(contentsOf: "} ".utf8)
        case (let noLabels, let le?):
            buffer.append(UInt8(ascii: "{"))
            if !noLabels {
                buffer.append(contentsOf: renderedLabels)
                buffer.append(UInt8(ascii: ","))
            }
            buffer.append(contentsOf: "le=\"".utf8)
            buffer.append(contentsOf: le.utf8)
            buffer.append(contentsOf: "\"} ".utf8)
        }
        buffer.append(contentsOf: value.utf8)
        buffer.append(UInt8(ascii: "\n"))
    }

    private static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }

    /// `name="value",...` with the exposition format's escapes (backslash, quote, newline).
    private static func render(_ labels: [(String, String)]) -> [UInt8] {
        var rendered: [UInt8] = []
        for (index, (key, value)) in labels.enumerated() {
            if index > 0 { rendered.append(UInt8(ascii: ",")) }
            rendered.append(contentsOf: key.utf8)
            rendered.append(contentsOf: "=\"".utf8)
            for byte in value.utf8 {
                switch byte {
                case UInt8(ascii: "\\"): rendered.append(contentsOf: "\\\\".utf8)
                case UInt8(ascii: "\""): rendered.append(contentsOf: "\\\"".utf8)
                case UInt8(ascii: "\n"): rendered.append(contentsOf: "\\n".utf8)
                default: rendered.append(byte)
                }
            }
            rendered.append(UInt8(ascii: "\""))
        }
        return rendered
    }
}
