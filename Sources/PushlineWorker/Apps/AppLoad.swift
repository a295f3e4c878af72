import PushlineAPNSCore
import Synchronization

/// One app's part of the in-flight window, in a worker that serves several apps (`AppWindow`):
/// its notifications in flight, when its jobs were last seen, whether it is held, and whether it
/// parks its jobs (`AppAdmission`). The in-flight count is the app's slice of `InflightGate`'s,
/// which is its one owner: only the gate adds to it and subtracts from it, with its total.
///
/// Atomics only: read by the intakes for each record and written by the event loops and the
/// producer's thread as jobs end.
final class AppLoad: Sendable {
    let name: String
    /// Whether the app is paced (`apps.NAME.max_rate`): a paced app at its share parks at once,
    /// since waiting for its room would make every other app wait at its pace.
    let isPaced: Bool
    /// The app's pace (`max_rate`, notifications per second; 0: none).
    let rate: Int
    /// The app's notifications in flight (waitable: the intake waits for the app's room). Changed
    /// by `InflightGate` only.
    let inflight = WaitableCount()
    /// When a job of the app was last read (monotonic nanoseconds), or `Int64.min`.
    private let lastSeen = Atomic<Int64>(.min)
    /// Whether APNs holds the app (kept by the pool's hold observer).
    private let held = Atomic<Bool>(false)
    /// Whether the app's new jobs go to the deferred topic (`AppAdmission`).
    private let parkingFlag = Atomic<Bool>(false)

    /// How long after its last job an app with nothing in flight still counts as having work
    /// (2 s, in nanoseconds).
    static let activeForNanoseconds: Int64 = 2_000_000_000

    init(name: String, rate: Int) {
        self.name = name
        self.rate = rate
        self.isPaced = rate > 0
    }

    var isHeld: Bool {
        get { held.load(ordering: .relaxed) }
        set { held.store(newValue, ordering: .relaxed) }
    }

    var isParking: Bool { parkingFlag.load(ordering: .relaxed) }

    /// Sets whether the app parks; true when that changed (the caller logs it).
    func setParking(_ parking: Bool) -> Bool {
        parkingFlag.exchange(parking, ordering: .relaxed) != parking
    }

    /// A job of the app was read at `now`.
    func seen(at now: MonotonicInstant) {
        lastSeen.store(now.nanoseconds, ordering: .relaxed)
    }

    /// Whether the app has work: notifications in flight, or a job read in the last `activeForNanoseconds`.
    func isActive(at now: MonotonicInstant) -> Bool {
        if inflight.value > 0 { return true }
        let seen = lastSeen.load(ordering: .relaxed)
        return seen != .min && now.nanoseconds &- seen < Self.activeForNanoseconds
    }
}
