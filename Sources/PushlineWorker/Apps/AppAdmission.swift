/// What the intake does with the next job of an app, in a worker that serves several apps: the
/// rule that keeps one app's trouble its own (docs/kafka.md, "Apps kept apart"). Pure: the intake
/// feeds it the app's state and acts on the answer.
///
/// - A held app parks its jobs at once (they could not go out before the hold ends), but for one
///   job when it has nothing in flight: a hold ends only when a probe, one of its queued
///   requests, is answered, and an app with every job parked would have none.
/// - An app that parks keeps parking until it is not held and its notifications in flight are
///   down to half its share (`stopsParking`): its parked backlog, brought back within its share,
///   keeps it there, so new jobs do not pass the parked ones while the backlog lasts.
/// - Below its share, a job is admitted.
/// - At its share, a paced app parks at once (its room comes back at its pace, and every other
///   app would wait at that pace behind it); any other app waits for room, up to the intake's
///   patience (`AppWindow.waitForRoom`), then parks if another app has work (it is slow: its share
///   did not free a sixteenth of itself in that time), or pauses the partitions as a worker with
///   one app does when it is alone.
struct AppAdmission: Sendable, Hashable {
    enum Decision: Sendable, Hashable {
        case admit
        case park
        /// At its share: wait for room (then park, or pause when no other app has work).
        case wait
    }

    var isHeld: Bool
    var isPaced: Bool
    var isParking: Bool
    /// The app's notifications in flight, with those of the intake's run not yet handed over.
    var inflight: Int
    var share: Int

    /// How many notifications the app may take now: its share's room, or for a held app one
    /// job's when it has nothing in flight (its probe). The deferred intake brings parked jobs
    /// back within it.
    var room: Int {
        isHeld ? (inflight == 0 ? 1 : 0) : share - inflight
    }

    var decision: Decision {
        if isHeld { return room > 0 ? .admit : .park }
        if isParking { return .park }
        if room > 0 { return .admit }
        return isPaced ? .park : .wait
    }

    /// Whether an app that parks may stop: not held, and in flight down to half its share.
    var stopsParking: Bool {
        !isHeld && inflight <= share / 2
    }
}
