/// nghttp2's guard against rapid reset (CVE-2023-44487), as a value: a token bucket on the
/// RST_STREAM frames a client sends. Each one takes a token; the bucket starts full at `burst`
/// and gains `perSecond` tokens a second, up to `burst`. A reset that finds it empty makes
/// nghttp2 send GOAWAY INTERNAL_ERROR and end the connection once its streams are done.
///
/// A client that cancels streams (request deadlines) meets it after `burst` resets plus
/// `perSecond` per second of the connection's life, so a long busy connection reaches it late
/// but surely.
public struct HTTP2ResetRateLimit: Sendable, Hashable, CustomStringConvertible {
    public var burst: UInt64
    public var perSecond: UInt64

    public init(burst: UInt64, perSecond: UInt64) {
        self.burst = burst
        self.perSecond = perSecond
    }

    /// nghttp2's own default (`nghttp2_option_set_stream_reset_rate_limit`): 1000, 33 per second.
    public static let nghttp2Default = HTTP2ResetRateLimit(burst: 1000, perSecond: 33)

    /// No limit: a bucket of 2^64 - 1 tokens (it never runs dry) that never needs to refill.
    public static let unlimited = HTTP2ResetRateLimit(burst: .max, perSecond: 0)

    public var isUnlimited: Bool { burst == .max }

    /// `BURST:PER_SECOND` (e.g. `1000:33`), or `off` for `unlimited`.
    public var description: String { isUnlimited ? "off" : "\(burst):\(perSecond)" }

    /// Parses `BURST:PER_SECOND` or `off`; nil when it is neither (a burst of 0 included: the
    /// first reset would end the connection, which no test wants by accident).
    public init?(parsing text: String) {
        if text == "off" {
            self = .unlimited
            return
        }
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let burst = UInt64(parts[0]), burst > 0, burst < .max, let perSecond = UInt64(parts[1]) else {
            return nil
        }
        self.init(burst: burst, perSecond: perSecond)
    }
}
