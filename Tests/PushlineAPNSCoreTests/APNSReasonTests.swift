import Testing

@testable import PushlineAPNSCore

@Suite struct APNSReasonTests {
    @Test func knownReasonsRoundTrip() {
        for (reason, _) in APNSReason.documented {
            #expect(APNSReason(rawValue: reason.rawValue) == reason)
        }
        #expect(APNSReason.documented.count == 42)
    }

    @Test func theUndocumentedEnvironmentKeyReasonIsKnownAsAnAuthenticationRefusal() {
        // APNs answers it (APNSwift met it in 2025) though Apple's table lists only
        // BadEnvironmentKeyIdInToken: it is named, and about the key, not the notification.
        let reason = APNSReason(rawValue: "BadEnvironmentKeyInToken")
        #expect(reason == .badEnvironmentKeyInToken)
        #expect(reason.documentedStatus == 403)
        #expect(APNSAnswerScope.of(status: 403, reason: reason) == .systemic)
        #expect(APNSDisposition(APNSResponse(status: 403, reason: reason)) == .permanent)
    }

    @Test func unknownReasonsAreKeptVerbatim() {
        let reason = APNSReason(rawValue: "SomethingNewFromApple")
        #expect(reason == .other("SomethingNewFromApple"))
        #expect(reason.rawValue == "SomethingNewFromApple")
        #expect(reason.documentedStatus == nil)
    }

    @Test func dispositionFollowsTheTable() {
        #expect(APNSDisposition(APNSResponse(status: 200)) == .delivered)
        #expect(
            APNSDisposition(APNSResponse(status: 410, reason: .unregistered, timestamp: 1_790_000_000_000))
                == .invalidToken(reason: .unregistered, since: 1_790_000_000_000)
        )
        #expect(
            APNSDisposition(APNSResponse(status: 410, reason: .expiredToken, timestamp: 5))
                == .invalidToken(reason: .expiredToken, since: 5)
        )
        #expect(APNSDisposition(APNSResponse(status: 403, reason: .expiredProviderToken)) == .retryable(.providerTokenExpired))
        #expect(APNSDisposition(APNSResponse(status: 403, reason: .invalidProviderToken)) == .permanent)
        #expect(APNSDisposition(APNSResponse(status: 429, reason: .tooManyRequests)) == .retryable(.throttled))
        #expect(APNSDisposition(APNSResponse(status: 500, reason: .internalServerError)) == .retryable(.serverError))
        #expect(APNSDisposition(APNSResponse(status: 503, reason: .serviceUnavailable)) == .retryable(.serverError))
        #expect(APNSDisposition(APNSResponse(status: 400, reason: .badDeviceToken)) == .permanent)
        #expect(APNSDisposition(APNSResponse(status: 413, reason: .payloadTooLarge)) == .permanent)
        for (reason, status) in APNSReason.documented {
            let disposition = APNSDisposition(APNSResponse(status: status, reason: reason))
            let retryableByTable = [429, 500, 503].contains(status) || reason == .expiredProviderToken
            #expect(disposition.isRetryable == retryableByTable, "\(reason)")
        }
    }

    @Test func outcomeWithoutResponseIsStatusZero() {
        let outcome = APNSOutcome(noResponse: .timeout, attempts: 2, latencyMilliseconds: 10)
        #expect(outcome.status == 0)
        #expect(outcome.reasonString == "timeout")
        #expect(outcome.disposition == .retryable(.transport))
        #expect(APNSOutcome(noResponse: .expired, attempts: 1, latencyMilliseconds: 0).disposition.isRetryable == false)
    }

    @Test func errorBodyParses() {
        let body = Array(#"{"reason":"Unregistered","timestamp":1790000000123}"#.utf8)
        let parsed = APNSErrorBody.parse(body)
        #expect(parsed.reason == "Unregistered")
        #expect(parsed.timestamp == 1_790_000_000_123)
        let response = APNSResponse(status: 410, apnsID: "x", apnsUniqueID: nil, body: body)
        #expect(response.reason == .unregistered)
        #expect(APNSErrorBody.parse(Array(APNSErrorBody.make(reason: "BadTopic").utf8)).reason == "BadTopic")
        let extra = Array(#" { "extra": {"a":[1,2,{"b":"}"}]}, "reason" : "New\u0041" } "#.utf8)
        #expect(APNSErrorBody.parse(extra).reason == "NewA")
        #expect(APNSErrorBody.parse(Array("not json".utf8)).reason == nil)
        #expect(APNSErrorBody.parse([UInt8]()).reason == nil)
    }
}
