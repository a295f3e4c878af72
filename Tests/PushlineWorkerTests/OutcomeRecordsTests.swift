import PushlineAPNSCore
import Testing

@testable import PushlineWorker

/// Which records a token's final outcome produces, by mode: a table of outcomes and what each
/// must give, with no publisher, no metrics and no clock.
@Suite struct OutcomeRecordsTests {
    static let source = RecordSource(topic: "push.jobs", partition: 2, offset: 40)
    static let token = "00ff"
    static let channel = "dHN0LXNyY2gtY2hubA=="
    static let meta = Array(#"{"campaign":"c42","variant":"B"}"#.utf8)

    static func job(broadcast: Bool = false, meta: [UInt8]? = Self.meta) -> Job {
        Job(
            id: "j1",
            tokens: broadcast ? [] : [token, "aa"],
            app: "default",
            topic: "com.example.app",
            pushType: broadcast ? .liveactivity : .alert,
            priority: .immediate,
            payload: Array("{}".utf8),
            channelID: broadcast ? channel : nil,
            meta: meta
        )
    }

    static func answered(_ status: Int, _ reason: APNSReason? = nil, timestamp: Int64? = nil) -> APNSOutcome {
        APNSOutcome(
            response: APNSResponse(status: status, reason: reason, timestamp: timestamp, apnsID: "answered-id"),
            attempts: 1,
            latencyMilliseconds: 3
        )
    }

    /// One row: the outcome, whether the job is a broadcast, and which records each mode gives
    /// (d = delivery, i = token_invalidated, g = channel_gone).
    struct Row: Sendable, CustomTestStringConvertible {
        var name: String
        var outcome: APNSOutcome
        var broadcast = false
        var invalidateOn = ["Unregistered"]
        var full: Set<Character>
        var compact: Set<Character>
        var testDescription: String { name }
    }

    static let rows: [Row] = [
        Row(name: "200", outcome: answered(200), full: ["d"], compact: []),
        Row(name: "410 Unregistered", outcome: answered(410, .unregistered, timestamp: 7), full: ["d", "i"], compact: ["d", "i"]),
        Row(
            name: "410 ExpiredToken, covered by Unregistered",
            outcome: answered(410, .expiredToken),
            full: ["d", "i"],
            compact: ["d", "i"]
        ),
        Row(
            name: "410 Unregistered, not in invalidate_on",
            outcome: answered(410, .unregistered),
            invalidateOn: [],
            full: ["d"],
            compact: ["d"]
        ),
        Row(name: "400 BadDeviceToken", outcome: answered(400, .badDeviceToken), full: ["d"], compact: ["d"]),
        Row(name: "429", outcome: answered(429, .tooManyRequests), full: ["d"], compact: ["d"]),
        Row(
            name: "0 timeout",
            outcome: APNSOutcome(noResponse: .timeout, attempts: 5, latencyMilliseconds: 9),
            full: ["d"],
            compact: ["d"]
        ),
        Row(
            name: "0 expired before the send",
            outcome: APNSOutcome(noResponse: .expired, attempts: 0, latencyMilliseconds: 0),
            full: ["d"],
            compact: ["d"]
        ),
        Row(name: "broadcast 200", outcome: answered(200), broadcast: true, full: ["d"], compact: []),
        Row(
            name: "broadcast ChannelNotRegistered",
            outcome: answered(400, .channelNotRegistered),
            broadcast: true,
            full: ["d", "g"],
            compact: ["d", "g"]
        ),
        Row(name: "broadcast BadChannelId", outcome: answered(400, .badChannelId), broadcast: true, full: ["d"], compact: ["d"]),
    ]

    static func kinds(_ records: OutcomeRecords) -> Set<Character> {
        var kinds: Set<Character> = []
        if records.delivery != nil { kinds.insert("d") }
        if records.invalidation != nil { kinds.insert("i") }
        if records.channelGone != nil { kinds.insert("g") }
        return kinds
    }

    @Test(arguments: rows) func eachOutcomeGivesItsRecordsInEachMode(_ row: Row) {
        for mode in ResultsMode.allCases {
            let job = Self.job(broadcast: row.broadcast)
            let records = OutcomeRecords.decide(
                job: job,
                index: 0,
                apnsID: .text("sent-id"),
                outcome: row.outcome,
                source: Self.source,
                environment: "sandbox",
                rules: OutcomeRules(mode: mode, invalidateOn: row.invalidateOn)
            )
            #expect(Self.kinds(records) == (mode == .full ? row.full : row.compact), "\(mode)")
            // Every record the outcome gives carries the job's meta.
            #expect(records.delivery.map { $0.echo.meta == Self.meta } ?? true)
            #expect(records.invalidation.map { $0.echo.meta == Self.meta } ?? true)
            #expect(records.channelGone.map { $0.echo.meta == Self.meta } ?? true)
        }
    }

    /// The pipeline writes delivery records straight from the outcome (no `ResultRecord.Delivery`
    /// in between): byte for byte what `decide`'s delivery encodes to, with a job-wide template
    /// and a single-token one, and the other records the same as `decide`'s.
    @Test(arguments: rows) func theDirectDeliveryBytesAreTheDecidedRecords(_ row: Row) throws {
        let job = Self.job(broadcast: row.broadcast)
        for mode in ResultsMode.allCases {
            let rules = OutcomeRules(mode: mode, invalidateOn: row.invalidateOn)
            for apnsID: RecordAPNSID? in [.text("sent-id"), nil] {
                let decided = OutcomeRecords.decide(
                    job: job,
                    index: 0,
                    apnsID: apnsID,
                    outcome: row.outcome,
                    source: Self.source,
                    environment: "sandbox",
                    rules: rules
                )
                var others = decided
                others.delivery = nil
                #expect(
                    (OutcomeRecords.others(job: job, index: 0, outcome: row.outcome, environment: "sandbox", rules: rules)
                        ?? OutcomeRecords())
                        == others
                )
                #expect(OutcomeRecords.wantsDelivery(row.outcome, rules: rules) == (decided.delivery != nil), "\(mode)")
                guard let delivery = decided.delivery else { continue }
                for records in [1, 2] {
                    let template = DeliveryRecordTemplate(
                        jobID: job.id,
                        app: job.app,
                        source: Self.source,
                        broadcast: row.broadcast,
                        echo: JobEcho(meta: job.meta),
                        records: records
                    )
                    let direct = template.encode(job: job, index: 0, apnsID: apnsID, outcome: row.outcome)
                    #expect(
                        direct == template.encode(delivery),
                        "\(String(decoding: direct, as: UTF8.self)) \(String(decoding: template.encode(delivery), as: UTF8.self))"
                    )
                }
            }
        }
    }

    @Test func theDeliveryHasTheOutcomesFields() throws {
        let outcome = Self.answered(410, .unregistered, timestamp: 1_790_000_000_000)
        let records = OutcomeRecords.decide(
            job: Self.job(),
            index: 0,
            apnsID: .text("sent-id"),
            outcome: outcome,
            source: Self.source,
            environment: "production",
            rules: OutcomeRules(mode: .compact)
        )
        let delivery = try #require(records.delivery)
        #expect(
            delivery
                == ResultRecord.Delivery(
                    jobID: "j1",
                    recipient: .token(Self.token),
                    app: "default",
                    status: 410,
                    reason: "Unregistered",
                    apnsID: "answered-id",
                    timestamp: 1_790_000_000_000,
                    attempts: 1,
                    latencyMilliseconds: 3,
                    source: Self.source,
                    echo: JobEcho(meta: Self.meta)
                )
        )
        #expect(
            records.invalidation
                == ResultRecord.TokenInvalidated(
                    token: Self.token,
                    app: "default",
                    topic: "com.example.app",
                    reason: "Unregistered",
                    invalidSince: 1_790_000_000_000,
                    jobID: "j1",
                    environment: "production",
                    echo: JobEcho(meta: Self.meta)
                )
        )
    }

    @Test func withoutAnAnswerTheSentIDStandsAndAJobWithoutMetaGivesNone() throws {
        let records = OutcomeRecords.decide(
            job: Self.job(meta: nil),
            index: 0,
            apnsID: .text("sent-id"),
            outcome: APNSOutcome(noResponse: .connection, attempts: 2, latencyMilliseconds: 4),
            source: Self.source,
            environment: "custom",
            rules: OutcomeRules()
        )
        let delivery = try #require(records.delivery)
        #expect(delivery.apnsID == "sent-id")
        #expect(delivery.status == 0 && delivery.reason == "connection")
        #expect(delivery.echo.meta == nil)
    }

    @Test func expiredTokenAloneInvalidatesOnlyExpiredToken() {
        let rules = OutcomeRules(invalidateOn: ["ExpiredToken"])
        #expect(rules.invalidateOn == ["ExpiredToken"])
        #expect(OutcomeRules(invalidateOn: ["Unregistered"]).invalidateOn == ["Unregistered", "ExpiredToken"])
    }
}
