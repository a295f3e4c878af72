import PushlineAPNSCore

/// The in-flight window shared by the apps of one worker (`worker.max_inflight`, or the adaptive
/// window's limit below it): each app's part (`AppLoad`) and its fair share, so that no app
/// takes more than its share while other apps have work (docs/kafka.md, "Apps kept apart").
///
/// An app's share is the window divided by the apps that have work and are not held (an app's
/// own share always counts it): one app alone has the whole window, two apps with work half each.
/// A held app's notifications stay in flight (they go out when the hold ends) but do not take
/// another app's share: the total may then pass the window by what the held app had, at most
/// one window.
///
/// Made only for a worker with more than one app; with one app the window is the gate's, as it
/// always was.
final class AppWindow: Sendable {
    /// Each app's part, by name.
    let loads: [String: AppLoad]
    /// The same, in name order (a scan for the share is over a few apps).
    let all: [AppLoad]
    let gate: InflightGate

    /// `apps`: each configured app's name and pace (`max_rate`, 0: none).
    init(apps: [String: Int], gate: InflightGate) {
        var loads: [String: AppLoad] = [:]
        for (name, rate) in apps { loads[name] = AppLoad(name: name, rate: rate) }
        self.loads = loads
        self.all = loads.keys.sorted().compactMap { loads[$0] }
        self.gate = gate
    }

    func load(of app: String) -> AppLoad? { loads[app] }

    /// The pool of `app` held it (`true`) or ended its hold (the pool's hold observer calls this,
    /// with the change as a value).
    func setHeld(_ held: Bool, app: String) {
        loads[app]?.isHeld = held
    }

    /// `load`'s share of the window now: the window over the apps with work that are not held
    /// (`load` among them), at least 1.
    func share(of load: AppLoad, at now: MonotonicInstant) -> Int {
        var sharing = 0
        for other in all where other === load || (!other.isHeld && other.isActive(at: now)) {
            sharing += 1
        }
        return max(1, gate.limit / max(1, sharing))
    }

    /// Whether an app other than `load` has work now.
    func othersActive(than load: AppLoad, at now: MonotonicInstant) -> Bool {
        all.contains { $0 !== load && $0.isActive(at: now) }
    }

    /// The rule's inputs for `load` now, with `pending` of its notifications not handed over yet
    /// (read only: nothing changes).
    func state(of load: AppLoad, pending: Int = 0, at now: MonotonicInstant) -> AppAdmission {
        AppAdmission(
            isHeld: load.isHeld,
            isPaced: load.isPaced,
            isParking: load.isParking,
            inflight: load.inflight.value + pending,
            share: share(of: load, at: now)
        )
    }

    /// The rule's inputs for `load`'s next job, with `pending` of its notifications in the
    /// intake's run and not handed over yet. An app that parks and may stop (`stopsParking`)
    /// stops here; the answer says so, for the log.
    func admission(for load: AppLoad, pending: Int, at now: MonotonicInstant) -> (admission: AppAdmission, stoppedParking: Bool) {
        var admission = state(of: load, pending: pending, at: now)
        var stopped = false
        if admission.isParking, admission.stopsParking {
            stopped = load.setParking(false)
            admission.isParking = false
        }
        return (admission, stopped)
    }

    /// How much room an app at its share waits for: a sixteenth of its share (at most 1,024), as
    /// the gate's quantum does for the whole window.
    static func quantum(of share: Int) -> Int {
        max(1, min(share / 16, 1024))
    }

    /// Waits until `load` has room for a quantum of its `share`, up to `patience`: true when it
    /// has, false when the patience ran out or the task was cancelled.
    func waitForRoom(_ load: AppLoad, share: Int, patience: Duration) async -> Bool {
        await load.inflight.wait(atMost: share - Self.quantum(of: share), within: patience)
    }
}
