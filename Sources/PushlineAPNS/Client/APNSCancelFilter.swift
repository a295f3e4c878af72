/// Picks the requests an owner cancels (`APNSClient.cancel(where:)`) by the key their batch's
/// observer gives them (`APNSBatchObserver.cancelKey(_:)`). Called under the pool's lock: it must
/// be quick and must not call the pool.
public typealias APNSCancelFilter = @Sendable (APNSCancelKey) -> Bool
