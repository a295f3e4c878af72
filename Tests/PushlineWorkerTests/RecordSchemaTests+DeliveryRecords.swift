import PushlineAPNSCore

@testable import PushlineWorker

/// The delivery records `encodedRecordsMatchTheirSchemas` checks: every documented reason, the
/// pool's own outcomes, held and broadcast deliveries, escapes, and the sender's meta and campaign.
extension RecordSchemaTests {
    /// Delivery records through the template the pipeline uses and through `ResultRecord`, their
    /// ids from `ids` in order; `meta` is the sender's meta the later ones echo.
    static func deliveryRecords(source: RecordSource, ids: APNSIDGenerator, token: String, meta: [UInt8]) -> [[UInt8]] {
        var deliveries: [[UInt8]] = []
        let template = DeliveryRecordTemplate(jobID: "c42-17", app: "default", source: source)
        deliveries.append(
            template.encode(
                token: token,
                status: 200,
                reason: nil,
                apnsID: ids.next(),
                timestamp: nil,
                attempts: 1,
                latencyMilliseconds: 3.21
            )
        )
        deliveries.append(
            template.encode(
                token: token,
                status: 200,
                reason: nil,
                apnsID: ids.next(),
                apnsUniqueID: "a6b0b0c4-2c4b-4b1e-9c36-3b2d1f1f0e6a",
                timestamp: nil,
                attempts: 1,
                latencyMilliseconds: 3.21
            )
        )
        for (reason, status) in APNSReason.documented {
            let timestamp: Int64? = status == 410 ? 1_790_000_000_000 : nil
            deliveries.append(
                template.encode(
                    token: token,
                    status: status,
                    reason: reason.rawValue,
                    apnsID: ids.next(),
                    timestamp: timestamp,
                    attempts: 2,
                    latencyMilliseconds: 12.44
                )
            )
        }
        deliveries.append(
            template.encode(
                token: token,
                status: 400,
                reason: "SomeFutureReason",
                apnsID: ids.next(),
                timestamp: nil,
                attempts: 1,
                latencyMilliseconds: 1
            )
        )
        for noResponse in [APNSOutcome.NoResponse.timeout, .connection, .expired, .protocolError] {
            let outcome = APNSOutcome(noResponse: noResponse, attempts: 5, latencyMilliseconds: 10_000)
            deliveries.append(
                template.encode(
                    token: token,
                    status: outcome.status,
                    reason: outcome.reasonString,
                    apnsID: ids.next(),
                    timestamp: nil,
                    attempts: outcome.attempts,
                    latencyMilliseconds: outcome.latencyMilliseconds
                )
            )
        }
        // A job past its deadline before it was sent: no apns-id, no attempt.
        let expired = APNSOutcome(noResponse: .expired, attempts: 0, latencyMilliseconds: 0)
        deliveries.append(
            template.encode(
                token: token,
                status: expired.status,
                reason: expired.reasonString,
                apnsID: nil,
                timestamp: nil,
                attempts: 0,
                latencyMilliseconds: 0
            )
        )
        // Held while the app was systemically refused: delivered after, hold limit, deadline.
        deliveries.append(
            template.encode(
                token: token,
                status: 200,
                reason: nil,
                apnsID: ids.next(),
                timestamp: nil,
                attempts: 1,
                latencyMilliseconds: 65_000,
                heldMilliseconds: 60_000.04
            )
        )
        deliveries.append(
            template.encode(
                token: token,
                status: 403,
                reason: "InvalidProviderToken",
                apnsID: ids.next(),
                timestamp: nil,
                attempts: 1,
                latencyMilliseconds: 600_000,
                heldMilliseconds: 599_999.9
            )
        )
        deliveries.append(
            template.encode(
                token: token,
                status: 0,
                reason: "expired",
                apnsID: ids.next(),
                timestamp: nil,
                attempts: 1,
                latencyMilliseconds: 30_000,
                final: true,
                heldMilliseconds: 29_000
            )
        )
        deliveries.append(
            template.encode(
                token: "00",
                status: 200,
                reason: nil,
                apnsID: ids.next(),
                timestamp: nil,
                attempts: 1,
                latencyMilliseconds: 1,
                final: false
            )
        )
        // Broadcasts: channel_id in place of token, apns-request-id as apns_id, apns-unique-id.
        let broadcast = DeliveryRecordTemplate(jobID: "la-9", app: "default", source: source, broadcast: true)
        deliveries.append(
            broadcast.encode(
                token: "dHN0LXNyY2gtY2hubA==",
                status: 200,
                reason: nil,
                apnsID: ids.next(),
                apnsUniqueID: ids.next(),
                timestamp: nil,
                attempts: 1,
                latencyMilliseconds: 4
            )
        )
        deliveries.append(
            ResultRecord.delivery(
                .init(
                    jobID: "la-10",
                    recipient: .channel("AAAA"),
                    app: "news",
                    status: 400,
                    reason: "ChannelNotRegistered",
                    apnsID: ids.next(),
                    timestamp: nil,
                    attempts: 1,
                    latencyMilliseconds: 2,
                    source: source
                )
            ).encoded()
        )
        let escaped = ResultRecord.Delivery(
            jobID: "quote\" slash\\ newline\n é",
            recipient: .token(token.uppercased()),
            app: "news",
            status: 410,
            reason: "Unregistered",
            apnsID: ids.next().uppercased(),
            timestamp: 1_790_000_000_000,
            attempts: 1,
            latencyMilliseconds: 0.05,
            source: RecordSource(topic: "push.jobs.urgent", partition: 0, offset: 0)
        )
        deliveries.append(ResultRecord.delivery(escaped).encoded())
        // With the sender's meta: the template's shared tail, a one-record template, and a
        // `ResultRecord`.
        for records in [1, 3] {
            let withMeta = DeliveryRecordTemplate(jobID: "m-1", app: "default", source: source, echo: JobEcho(meta: meta), records: records)
            deliveries.append(
                withMeta.encode(
                    token: token,
                    status: 200,
                    reason: nil,
                    apnsID: ids.next(),
                    timestamp: nil,
                    attempts: 1,
                    latencyMilliseconds: 2
                )
            )
        }
        deliveries.append(
            ResultRecord.delivery(
                .init(
                    jobID: "la-11",
                    recipient: .channel("AAAA"),
                    app: "default",
                    status: 400,
                    reason: "ChannelNotRegistered",
                    apnsID: ids.next(),
                    timestamp: nil,
                    attempts: 1,
                    latencyMilliseconds: 2,
                    heldMilliseconds: 1,
                    source: source,
                    echo: JobEcho(meta: meta)
                )
            ).encoded()
        )
        // With a campaign (with and without meta): cancelled before its send, and delivered.
        for (records, withMeta) in [(1, false), (3, true)] {
            let template = DeliveryRecordTemplate(
                jobID: "cp-1",
                app: "default",
                source: source,
                echo: JobEcho(campaign: "spring \"sale\" é", meta: withMeta ? meta : nil),
                records: records
            )
            for (status, reason) in [(0, "cancelled"), (200, nil)] as [(Int, String?)] {
                deliveries.append(
                    template.encode(
                        token: token,
                        status: status,
                        reason: reason,
                        apnsID: status == 0 ? nil : ids.next(),
                        timestamp: nil,
                        attempts: status == 0 ? 0 : 1,
                        latencyMilliseconds: 0
                    )
                )
            }
        }
        return deliveries
    }
}
