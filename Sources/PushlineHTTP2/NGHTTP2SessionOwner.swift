import CNGHTTP2

/// Runs `body` with the owner of the session in `userData` (the handler that owns the session and
/// installed its own hot callbacks), without retaining either: the handler owns the session, so
/// it outlives every callback the session makes. Returns 0, or nghttp2's failure code when `body`
/// throws. A request makes about a dozen callbacks, and a retain and release around each (the
/// shared callbacks reach the handler through an existential) was a measurable share of a
/// connection's time.
@inline(__always)
package func withSessionOwner<Owner: AnyObject>(
    _ userData: UnsafeMutableRawPointer?,
    as: Owner.Type,
    failure: Int32 = Int32(NGHTTP2_ERR_CALLBACK_FAILURE.rawValue),
    _ body: (Owner) throws -> Void
) -> Int32 {
    guard let userData else { return 0 }
    return Unmanaged<NGHTTP2Session>.fromOpaque(userData)._withUnsafeGuaranteedRef { session in
        guard let owner = session.owner else { return 0 }
        return Unmanaged<Owner>.fromOpaque(owner)._withUnsafeGuaranteedRef { handler in
            do {
                try body(handler)
                return 0
            } catch {
                return failure
            }
        }
    }
}
