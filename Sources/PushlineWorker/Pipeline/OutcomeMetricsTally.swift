import Metrics
import PushlineAPNS

/// The per-notification metrics of one run of outcomes (`ResultBatch`), added up while the run
/// lasts and recorded when it ends (`flush()`): delivered notifications, end-to-end latency, and
/// queue delay (the lane's histogram and the window controller's average). The run's tokens
/// share their app and lane, so each metric costs a few atomic adds per run, not per
/// notification. A value for another app or lane records what was counted first.
struct OutcomeMetricsTally {
    private var delivered: Counter?
    private var deliveredID: ObjectIdentifier?
    private var deliveredCount = 0
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
        endToEnd.flush()
        laneQueueDelay.flush()
        flushQueueDelays()
    }

    private mutating func flushDelivered() {
        guard deliveredCount > 0, let delivered else { return }
        delivered.increment(by: deliveredCount)
        deliveredCount = 0
    }

    private mutating func flushQueueDelays() {
        guard queueDelayCount > 0, let queueDelays else { return }
        queueDelays.add(totalNanoseconds: queueDelayTotal, count: queueDelayCount)
        queueDelayTotal = 0
        queueDelayCount = 0
    }
}
