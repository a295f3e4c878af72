import PushlineAPNS
import PushlineKafka

/// The headers of a parked job's copy on the deferred topic (docs/records.md, "Parked jobs"):
/// where the job was first read, its app and lane, and when it may go out.
struct ParkedRecordHeaders: Sendable, Hashable {
    static let sourceKey = "pushline-source"
    static let appKey = "pushline-app"
    static let laneKey = "pushline-lane"
    static let notBeforeKey = "pushline-not-before"
    static let parkedAtKey = "pushline-parked-at"

    var source: RecordSource
    var app: String
    var lane: SendLane
    /// Unix milliseconds before which the job is not brought back.
    var notBefore: Int64
    /// Unix milliseconds when it was parked.
    var parkedAt: Int64

    var headers: [KafkaHeader] {
        [
            KafkaHeader(key: Self.sourceKey, value: Array(source.coordinates.utf8)),
            KafkaHeader(key: Self.appKey, value: Array(app.utf8)),
            KafkaHeader(key: Self.laneKey, value: Array(lane.rawValue.utf8)),
            KafkaHeader(key: Self.notBeforeKey, value: Array(String(notBefore).utf8)),
            KafkaHeader(key: Self.parkedAtKey, value: Array(String(parkedAt).utf8)),
        ]
    }

    /// Reads a deferred record's headers; nil when one is missing or malformed (the record was not
    /// written by a worker: it is then treated as a job read for the first time).
    init?(_ headers: [KafkaHeader]) {
        func text(_ key: String) -> String? {
            headers.last { $0.key == key }?.value.map { String(decoding: $0, as: UTF8.self) }
        }
        guard let sourceText = text(Self.sourceKey), let source = RecordSource(coordinates: sourceText),
            let app = text(Self.appKey),
            let lane = text(Self.laneKey).flatMap(SendLane.init(rawValue:)),
            let notBefore = text(Self.notBeforeKey).flatMap({ Int64($0) }),
            let parkedAt = text(Self.parkedAtKey).flatMap({ Int64($0) })
        else { return nil }
        self.init(source: source, app: app, lane: lane, notBefore: notBefore, parkedAt: parkedAt)
    }

    init(source: RecordSource, app: String, lane: SendLane, notBefore: Int64, parkedAt: Int64) {
        self.source = source
        self.app = app
        self.lane = lane
        self.notBefore = notBefore
        self.parkedAt = parkedAt
    }
}
