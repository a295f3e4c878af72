import Logging
import PushlineAPNS
import PushlineAPNSCore
import PushlineKafka

/// The bulk intake of a worker with several apps: each job is admitted within its app's share of
/// the window, or parked, or waited for (`AppAdmission`), so that one app's hold, pace or
/// slowness never stops the partitions for the others (docs/kafka.md, "Apps kept apart"). A
/// worker with one app uses `PipelineService`'s own intake and `Backpressure`, as before.
///
/// Runs of records are built as there: decoded, started under one consumer lock, handed to the
/// pipeline (admitted ones) and to `JobRelease.park` (parked ones) together.
struct AppsIntake: Sendable {
    let window: AppWindow
    /// The deferred topic's name, for the log.
    let deferredTopic: String
    let metrics: [String: AppWindowMetrics]
    /// How long a job of an app at its share waits for room before the app parks.
    var patience: Duration = .milliseconds(500)

    /// Takes `records` (one poll batch) into the pipeline, admitted or parked; false when
    /// cancelled.
    func take(
        _ records: [KafkaRecord],
        pipeline: JobPipeline,
        consumer: KafkaConsumer,
        logger: Logger
    ) async -> Bool {
        var run: [DecodedRecord] = []
        var parked: [DecodedRecord] = []
        // Each app's notifications in the run, not handed over yet.
        var pending: [ObjectIdentifier: Int] = [:]
        func flush() {
            guard !run.isEmpty || !parked.isEmpty else { return }
            let started = consumer.start((run + parked).map { $0.record.id })
            pipeline.handle(run, started: Array(started[..<run.count]))
            pipeline.results.release.park(parked, started: Array(started[run.count...]), lane: .bulk) { app in notBeforeDelay(app) }
            run.removeAll(keepingCapacity: true)
            parked.removeAll(keepingCapacity: true)
            pending.removeAll(keepingCapacity: true)
        }
        for record in records {
            let decoded = pipeline.decode(record)
            guard case .success(let job) = decoded.job, let load = window.load(of: job.app),
                !pipeline.cancellations.isCancelled(job)
            else {
                // A rejection, or a cancelled job (finalised without a request): it takes no room.
                run.append(decoded)
                continue
            }
            while true {
                if Task.isCancelled { return false }
                let now = MonotonicInstant.now
                load.seen(at: now)
                let key = ObjectIdentifier(load)
                let (admission, stopped) = window.admission(for: load, pending: pending[key] ?? 0, at: now)
                if stopped { parkingChanged(load, parking: false, admission: admission, logger: logger) }
                switch admission.decision {
                case .admit:
                    run.append(decoded)
                    pending[key, default: 0] += job.recipientCount
                case .park:
                    if !admission.isParking, load.setParking(true) {
                        parkingChanged(load, parking: true, admission: admission, logger: logger)
                    }
                    parked.append(decoded)
                case .wait:
                    // Hand over what the run has first: the app's room may be in it.
                    flush()
                    if await window.waitForRoom(load, share: admission.share, patience: patience) { continue }
                    if Task.isCancelled { return false }
                    if window.othersActive(than: load, at: .now) {
                        // Slow (or held meanwhile): its share did not free a sixteenth of itself
                        // within the patience.
                        if load.setParking(true) {
                            parkingChanged(load, parking: true, admission: window.state(of: load, at: .now), logger: logger)
                        }
                        continue
                    }
                    // Alone: the partitions pause until the app is down to three quarters of its
                    // share, as a worker with one app does.
                    consumer.pause()
                    let resumed = await load.inflight.wait(atMost: admission.share * 3 / 4)
                    consumer.resume()
                    if !resumed { return false }
                    continue
                }
                break
            }
        }
        flush()
        return true
    }

    /// Whether an urgent job is parked: only when its app is held (urgent jobs are few, and wait
    /// for room in the urgent lane's own window otherwise), and never a cancelled one (finalised
    /// at once).
    func parksUrgent(_ decoded: DecodedRecord, cancellations: Cancellations) -> Bool {
        guard case .success(let job) = decoded.job, let load = window.load(of: job.app), !cancellations.isCancelled(job) else {
            return false
        }
        load.seen(at: .now)
        return load.isHeld
    }

    /// How long a parked job of `app` should wait at least: for a paced app, the time its pace
    /// takes to bring it down to half its share; zero for the others (their hold or room decides).
    private func notBeforeDelay(_ app: String) -> Int64 {
        guard let load = window.load(of: app), load.isPaced, load.rate > 0 else { return 0 }
        let excess = load.inflight.value - window.share(of: load, at: .now) / 2
        return excess > 0 ? Int64(excess) * 1000 / Int64(load.rate) : 0
    }

    private func parkingChanged(_ load: AppLoad, parking: Bool, admission: AppAdmission, logger: Logger) {
        metrics[load.name]?.parking.record(parking ? 1 : 0)
        if parking {
            let why = admission.isHeld ? "held" : admission.isPaced ? "paced at its share" : "slow at its share"
            logger.notice(
                "app parks its jobs on the deferred topic; other apps keep the rest of the window",
                metadata: [
                    "app": "\(load.name)", "why": "\(why)", "share": "\(admission.share)",
                    "inflight": "\(admission.inflight)", "deferred_topic": "\(deferredTopic)",
                ]
            )
        } else {
            logger.notice(
                "app stops parking: its new jobs are admitted again",
                metadata: ["app": "\(load.name)", "share": "\(admission.share)", "inflight": "\(admission.inflight)"]
            )
        }
    }
}
