import PushlineAPNSCore
import Testing

@testable import PushlineAPNS

@Suite struct TokenBucketTests {
    /// How many tokens `bucket` gives at `now`, taking them all.
    static func drain(_ bucket: inout TokenBucket, at now: MonotonicInstant) -> Int {
        var taken = 0
        while bucket.take(now: now) { taken += 1 }
        return taken
    }

    @Test func aFullBucketGivesItsBurstThenOneTokenPerInterval() {
        let start = MonotonicInstant.now
        var bucket = TokenBucket(rate: 200, now: start)  // burst: 50 ms of 200/s = 10
        #expect(Self.drain(&bucket, at: start) == 10)
        let next = bucket.nextTokenAt(now: start)
        #expect(next == start + .milliseconds(5))
        #expect(Self.drain(&bucket, at: start + .milliseconds(4)) == 0)
        #expect(Self.drain(&bucket, at: start + .milliseconds(5)) == 1)
        // A quiet second refills only up to the burst.
        #expect(Self.drain(&bucket, at: start + .seconds(1)) == 10)
    }

    @Test func aSlowRateStillAllowsOneRequest() {
        let start = MonotonicInstant.now
        var bucket = TokenBucket(rate: 1, now: start)
        #expect(Self.drain(&bucket, at: start) == 1)
        #expect(Self.drain(&bucket, at: start + .milliseconds(999)) == 0)
        #expect(Self.drain(&bucket, at: start + .seconds(1)) == 1)
    }
}
