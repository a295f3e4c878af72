import PushlineAPNSCore

/// How a pooled connection packs a request into its stream's `HTTP2StreamTag`, so that nothing
/// but the immutable batch is kept per stream:
/// - `id`: the machine's request id (low 32 bits) and the request's index in its batch (high 32);
/// - `value`: the send time in microseconds (high 48 bits: 8.9 years of uptime) and the provider
///   token's generation (low 16 bits; generations wrap after 65,535 refreshes, 2.5 years at the
///   fastest refresh APNs allows, and are only compared for equality with the current one).
enum StreamTagging {
    static func id(_ request: RequestID, index: Int) -> UInt64 {
        UInt64(request.slot) | UInt64(UInt32(truncatingIfNeeded: index)) << 32
    }

    static func requestID(_ id: UInt64) -> RequestID {
        RequestID(Int(UInt32(truncatingIfNeeded: id)))
    }

    static func index(_ id: UInt64) -> Int {
        Int(UInt32(truncatingIfNeeded: id >> 32))
    }

    static func value(sentAt: MonotonicInstant, tokenGeneration: UInt16) -> UInt64 {
        UInt64(UInt64(clamping: sentAt.nanoseconds / 1000) << 16) | UInt64(tokenGeneration)
    }

    static func sentAt(_ value: UInt64) -> MonotonicInstant {
        MonotonicInstant(nanoseconds: Int64(value >> 16) * 1000)
    }

    static func tokenGeneration(_ value: UInt64) -> UInt16 {
        UInt16(truncatingIfNeeded: value)
    }
}
