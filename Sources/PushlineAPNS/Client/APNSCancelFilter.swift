/// Picks the requests an owner cancels (`APNSClient.cancel(where:)`): the batch's observer and the
/// index it hears the request as (`APNSBatchSubmission.firstIndex` + the request's index). Called
/// under the pool's lock: it must be quick and must not call the pool.
public typealias APNSCancelFilter = @Sendable (any APNSBatchObserver, Int) -> Bool
