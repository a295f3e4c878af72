import PushlineAPNSCore
import Testing

/// Which answers are about one notification and which about the whole app (docs/apns.md).
@Suite struct APNSAnswerScopeTests {
    @Test func everyDocumentedReasonHasAScope() {
        for (reason, _) in APNSReason.documented {
            #expect(APNSAnswerScope.table[reason] != nil, "\(reason) has no scope")
        }
    }

    @Test func tokenLevelReasonsAreFinalForTheirNotification() {
        let tokenLevel: [APNSReason] = [
            .badDeviceToken, .unregistered, .expiredToken, .deviceTokenNotForTopic, .payloadTooLarge, .badCollapseId,
            .badExpirationDate, .badPriority, .payloadEmpty, .tooManyRequests,
        ]
        for reason in tokenLevel {
            #expect(APNSAnswerScope.of(status: reason.documentedStatus!, reason: reason) == .notification, "\(reason)")
        }
        #expect(APNSAnswerScope.of(status: 200, reason: nil) == .notification)
    }

    @Test func keyCertificateTopicEnvironmentAndServerAnswersAreSystemic() {
        let systemic: [APNSReason] = [
            .invalidProviderToken, .missingProviderToken, .expiredProviderToken, .badCertificate, .badCertificateEnvironment,
            .forbidden, .topicDisallowed, .badTopic, .tooManyProviderTokenUpdates, .unrelatedKeyIdInToken,
            .badEnvironmentKeyIdInToken, .badEnvironmentKeyInToken, .internalServerError, .serviceUnavailable, .shutdown,
        ]
        for reason in systemic {
            #expect(APNSAnswerScope.of(status: reason.documentedStatus!, reason: reason) == .systemic, "\(reason)")
        }
    }

    @Test func unknownReasonsFollowTheirStatus() {
        #expect(APNSAnswerScope.of(status: 403, reason: .other("NewAuthProblem")) == .systemic)
        #expect(APNSAnswerScope.of(status: 502, reason: nil) == .systemic)
        #expect(APNSAnswerScope.of(status: 400, reason: .other("NewPayloadProblem")) == .notification)
    }
}
