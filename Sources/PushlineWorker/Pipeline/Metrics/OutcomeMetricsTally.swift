import Metrics
import PushlineAPNS

/// The per-notification metrics of one run of outcomes (`ResultBatch`), added up while the run
/// lasts and recorded when it ends (`flush()`): delivered notifications, the other outcomes (by
/// status and reason), end-to-end latency, and queue delay (the lane's histogram and the window
/// controller's average). The run's tokens share their app and lane, and mostly their outcome, so
/// each metric costs a few atomic adds per run, not per notification. A value for another app,
/// lane or outcome records what was counted first.
struct OutcomeMetricsTally {
    private var delivered: Counter?
    private var deliveredID: ObjectIdentifier?
    private var deliveredCount = 0
    /// The last outcome other than a plain 2xx: its app, status and reason, and its counter. Kept
    /// field by field: compared in place, with no copy of the counter (a retain) per outcome.
    private var otherApp: ObjectIdentifier?
    private var otherStatus = 0
    private var otherReason = ""
    private var otherCounter: Counter?
    private var otherCount = 0
    private let endToEnd = TimerTally()
    private let laneQueueDelay = TimerTally()
    private var queueDelays: QueueDelayMeter?
    private var queueDelaysID: ObjectIdentifier?
    private var queueDelayTotal: Int64 = 0
    private var queueDelayCount = 0

    mutating func delivered(_ counter: Counter) {
        if ObjectIdentifier(counter) != deliveredID {
            flushDelivered()
            delivered = counter
            deliveredID = ObjectIdentifier(counter)
        }
        deliveredCount += 1
    }

    /// An outcome other than a plain 2xx (an expired token, a 410): `counter` finds its counter
    /// (a locked lookup) only when it differs from the last one counted.
    mutating func other(app: ObjectIdentifier, status: Int, reason: String, counter: () -> Counter) {
        if otherApp == app, otherStatus == status, otherReason == reason {
            otherCount += 1
            return
        }
        flushOther()
        otherCounter = counter()
        (otherApp, otherStatus, otherReason) = (app, status, reason)
        otherCount = 1
    }

    mutating func endToEnd(_ nanoseconds: Int64, in timer: HistogramTimer) {
        endToEnd.record(nanoseconds, in: timer)
    }

    /// A notification's queue delay, for its lane's histogram and for `meter`'s average.
    mutating func queueDelay(_ nanoseconds: Int64, lane: HistogramTimer, meter: QueueDelayMeter) {
        laneQueueDelay.record(nanoseconds, in: lane)
        if ObjectIdentifier(meter) != queueDelaysID {
            flushQueueDelays()
            queueDelays = meter
            queueDelaysID = ObjectIdentifier(meter)
        }
        queueDelayTotal &+= nanoseconds
        queueDelayCount += 1
    }

    /// Records what was counted.
    mutating func flush() {
        flushDelivered()
        flushOther()
        endToEnd.flush()
        laneQueueDelay.flush()
        flushQueueDelays()
    }

    private mutating func flushDelivered() {
        guard deliveredCount > 0, let delivered else { return }
        delivered.increment(by: deliveredCount)
        deliveredCount = 0
    }

    private mutating func flushOther() {
        guard otherCount > 0 else { return }
        otherCounter?.increment(by: otherCount)
        otherCount = 0
    }

    private mutating func flushQueueDelays() {
        guard queueDelayCount > 0, let queueDelays else { return }
        queueDelays.add(totalNanoseconds: queueDelayTotal, count: queueDelayCount)
        queueDelayTotal = 0
        queueDelayCount = 0
    }
}
