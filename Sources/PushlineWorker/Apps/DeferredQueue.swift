import PushlineAPNS
import PushlineKafka

/// The parked jobs a worker read back from the deferred topic and holds until their app can send
/// (`DeferredIntake`): each app's in the order read, its urgent ones first. Pure: the intake
/// appends what it reads, takes what an app has room for, and drops what a revoke took away.
///
/// Nothing here is started at the consumer: an entry blocks its partition's commits (its offset
/// is not stored past it) and, when its partition is revoked, is left to the next owner.
struct DeferredQueue: Sendable {
    struct Entry: Sendable {
        var record: DecodedRecord
        var app: String
        var lane: SendLane
        /// Unix milliseconds before which the entry is not taken.
        var notBefore: Int64
        /// Its notifications.
        var weight: Int
    }

    /// One app's entries, by lane; `head` is the first not yet taken.
    private struct Lanes: Sendable {
        var urgent: [Entry] = []
        var bulk: [Entry] = []
        var urgentHead = 0
        var bulkHead = 0

        var count: Int { urgent.count - urgentHead + bulk.count - bulkHead }
    }

    private var apps: [String: Lanes] = [:]
    /// Entries held, over every app.
    private(set) var count = 0

    init() {}

    /// The apps with entries, in name order.
    var appsWaiting: [String] { apps.filter { $0.value.count > 0 }.keys.sorted() }

    func count(of app: String) -> Int { apps[app]?.count ?? 0 }

    mutating func append(_ entry: Entry) {
        switch entry.lane {
        case .urgent: apps[entry.app, default: Lanes()].urgent.append(entry)
        case .bulk: apps[entry.app, default: Lanes()].bulk.append(entry)
        }
        count += 1
    }

    /// Takes `app`'s entries in order, urgent ones first, while they fit in `room` notifications
    /// (the first one always, when there is room: a job is admitted whole) and their not-before
    /// time has come by `now`; an entry whose time has not come stops its lane, one that does not
    /// fit stops the take.
    mutating func take(app: String, room: Int, now: Int64) -> [Entry] {
        guard room > 0, var lanes = apps[app] else { return [] }
        var left = room
        var taken: [Entry] = []
        /// Takes from one lane; false when an entry stopped it for want of room (no bulk entry
        /// passes an urgent one that does not fit).
        func takeFrom(_ entries: [Entry], head: inout Int) -> Bool {
            while head < entries.count {
                let entry = entries[head]
                guard left > 0, entry.weight <= left || taken.isEmpty else { return false }
                guard entry.notBefore <= now else { return true }
                taken.append(entry)
                left -= entry.weight
                head += 1
            }
            return true
        }
        if takeFrom(lanes.urgent, head: &lanes.urgentHead) {
            _ = takeFrom(lanes.bulk, head: &lanes.bulkHead)
        }
        count -= taken.count
        apps[app] = lanes.count == 0 ? nil : Self.compacted(lanes)
        return taken
    }

    /// Takes out, in order, every app's entries `picked` chooses (the jobs of a cancel, which need
    /// no room: they end without a request), whatever their room or not-before time.
    mutating func take(where picked: (Entry) -> Bool) -> [Entry] {
        var taken: [Entry] = []
        for app in apps.keys.sorted() {
            guard var lanes = apps[app] else { continue }
            var kept = Lanes()
            for entry in lanes.urgent[lanes.urgentHead...] {
                if picked(entry) { taken.append(entry) } else { kept.urgent.append(entry) }
            }
            for entry in lanes.bulk[lanes.bulkHead...] {
                if picked(entry) { taken.append(entry) } else { kept.bulk.append(entry) }
            }
            lanes = kept
            apps[app] = lanes.count == 0 ? nil : lanes
        }
        count -= taken.count
        return taken
    }

    /// Drops the entries of `partitions` (revoked: their next owner reads them again); returns how
    /// many.
    mutating func drop(partitions: Set<TopicPartition>) -> Int {
        var dropped = 0
        for app in Array(apps.keys) {
            guard var lanes = apps[app] else { continue }
            let before = lanes.count
            lanes.urgent = Array(lanes.urgent[lanes.urgentHead...]).filter { !partitions.contains($0.record.record.id.topicPartition) }
            lanes.bulk = Array(lanes.bulk[lanes.bulkHead...]).filter { !partitions.contains($0.record.record.id.topicPartition) }
            lanes.urgentHead = 0
            lanes.bulkHead = 0
            dropped += before - lanes.count
            apps[app] = lanes.count == 0 ? nil : lanes
        }
        count -= dropped
        return dropped
    }

    /// Storage of taken entries is given back once they are most of it.
    private static func compacted(_ lanes: Lanes) -> Lanes {
        var lanes = lanes
        if lanes.urgentHead > 64, lanes.urgentHead * 2 > lanes.urgent.count {
            lanes.urgent.removeFirst(lanes.urgentHead)
            lanes.urgentHead = 0
        }
        if lanes.bulkHead > 64, lanes.bulkHead * 2 > lanes.bulk.count {
            lanes.bulk.removeFirst(lanes.bulkHead)
            lanes.bulkHead = 0
        }
        return lanes
    }
}
