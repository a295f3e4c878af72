import PushlineAPNSCore

@testable import PushlineAPNS

/// Requests for the tests of the pool machine's parts, which take them by id.
enum PoolFixture {
    static func batch(
        _ count: Int,
        options: APNSSendOptions = APNSSendOptions(),
        now: MonotonicInstant,
        completion: RequestBatch.Completion = .closure { _, _ in }
    ) -> RequestBatch {
        RequestBatch(
            notifications: Array(
                repeating: APNSNotification(deviceToken: "00", topic: "t", apnsID: "a", payload: []),
                count: count
            ),
            options: options,
            created: now,
            completion: completion
        )
    }

    /// `count` requests of one batch in `requests`, by id.
    static func insert(
        _ count: Int,
        options: APNSSendOptions = APNSSendOptions(),
        into requests: inout PoolRequests,
        now: MonotonicInstant
    ) -> [RequestID] {
        let batch = batch(count, options: options, now: now)
        return (0..<count).map { requests.insert(RequestState(batch: batch, index: $0)) }
    }

    static func requests(connections: Int = 2, maxAttempts: Int = 3, tokenAuth: Bool = false) -> PoolRequests {
        PoolRequests(
            connections: connections,
            retryPolicy: RetryPolicy(maxAttempts: maxAttempts, baseDelay: .milliseconds(100)),
            maxFreeResends: 2,
            tokenAuth: tokenAuth
        )
    }
}
