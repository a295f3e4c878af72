/// One send the pool machine decided: request `id`, which is notification `index` of `batch`, on
/// the connection the action names (a stream slot is reserved there). The connection reads the
/// immutable request and reports its end by `id`; it changes nothing of the request.
struct OutgoingRequest: Sendable {
    var id: RequestID
    var batch: RequestBatch
    var index: Int
}

extension OutgoingRequest {
    var options: APNSSendOptions { batch.options }
}
