import PushlineAPNSCore

/// What the deferred intake waits for after a turn that left jobs held (`DeferredIntake`): the
/// first moment the clock alone can make one ready (a not-before time, or a share growing as an
/// idle app stops counting), and the apps that wait only for room, each with the in-flight count
/// at which it has some. The intake waits for the first of these, a job read back, a hold's
/// change (`AppWindow.holdChanged`) or a raised window (`InflightGate.limitRaised`): nothing is
/// polled, and a turn comes only when something it depends on changed.
struct DeferredWake: Sendable {
    /// The earliest moment the clock alone can make a held job ready; nil: none will.
    private(set) var deadline: MonotonicInstant?
    /// The apps whose next job waits for room, with the in-flight count that gives it some.
    private(set) var rooms: [(load: AppLoad, atMost: Int)] = []

    init() {}

    /// Something becomes ready at `instant`.
    mutating func wake(at instant: MonotonicInstant) {
        deadline = min(deadline ?? instant, instant)
    }

    /// `load`'s next job is ready but waits until its in-flight count is at most `atMost`.
    mutating func wake(when load: AppLoad, isAtMost atMost: Int) {
        rooms.append((load, max(0, atMost)))
    }

    /// What a held app's next job waits for: `admission`'s room (the share's, or a held app's
    /// probe, which needs nothing in flight), for a quantum of the share as the bulk intake does.
    static func roomThreshold(_ admission: AppAdmission) -> Int {
        admission.isHeld ? 0 : admission.share - AppWindow.quantum(of: admission.share)
    }
}
