import PushlineAPNSCore
import Testing

@testable import PushlineWorker

/// The rule that keeps apps apart (`AppAdmission`, `AppWindow`), without I/O: what the intake does
/// with an app's next job, and how the window is shared.
@Suite struct AppAdmissionTests {
    static func admission(held: Bool = false, paced: Bool = false, parking: Bool = false, inflight: Int, share: Int) -> AppAdmission {
        AppAdmission(isHeld: held, isPaced: paced, isParking: parking, inflight: inflight, share: share)
    }

    @Test func belowItsShareAJobIsAdmitted() {
        #expect(Self.admission(inflight: 0, share: 100).decision == .admit)
        #expect(Self.admission(inflight: 99, share: 100).decision == .admit)
        #expect(Self.admission(paced: true, inflight: 99, share: 100).decision == .admit)
    }

    /// A held app parks at once, but keeps one job in flight: its probe (a hold ends only when
    /// a queued request is answered).
    @Test func aHeldAppParksAtOnceButForItsProbe() {
        #expect(Self.admission(held: true, inflight: 1, share: 100).decision == .park)
        #expect(Self.admission(held: true, inflight: 500, share: 100).decision == .park)
        #expect(Self.admission(held: true, parking: true, inflight: 1, share: 100).decision == .park)
        #expect(Self.admission(held: true, inflight: 0, share: 100).decision == .admit)
        #expect(Self.admission(held: true, parking: true, inflight: 0, share: 100).decision == .admit)
        // The same rule is the room the deferred intake brings parked jobs back within.
        #expect(Self.admission(held: true, inflight: 0, share: 100).room == 1)
        #expect(Self.admission(held: true, inflight: 3, share: 100).room == 0)
        #expect(Self.admission(inflight: 30, share: 100).room == 70)
    }

    @Test func atItsShareAPacedAppParksAndAnyOtherWaits() {
        #expect(Self.admission(paced: true, inflight: 100, share: 100).decision == .park)
        #expect(Self.admission(inflight: 100, share: 100).decision == .wait)
        #expect(Self.admission(inflight: 150, share: 100).decision == .wait)
    }

    @Test func anAppThatParksKeepsParkingUntilHalfItsShareAndNotHeld() {
        #expect(Self.admission(parking: true, inflight: 10, share: 100).decision == .park)
        #expect(!Self.admission(parking: true, inflight: 51, share: 100).stopsParking)
        #expect(Self.admission(parking: true, inflight: 50, share: 100).stopsParking)
        #expect(!Self.admission(held: true, parking: true, inflight: 0, share: 100).stopsParking)
    }

    /// The share: the window over the apps with work that are not held, the asking app always
    /// among them; an app with nothing in flight has work for two seconds after its last job.
    @Test func theWindowIsSharedByTheAppsWithWorkThatAreNotHeld() {
        let gate = InflightGate(limit: 1200)
        let window = AppWindow(apps: ["a": 0, "b": 0, "c": 200], gate: gate)
        let (a, b, c) = (window.load(of: "a")!, window.load(of: "b")!, window.load(of: "c")!)
        let now = MonotonicInstant(nanoseconds: 10_000_000_000)
        #expect(window.share(of: a, at: now) == 1200, "alone, an app has the whole window")
        b.seen(at: now)
        #expect(window.share(of: a, at: now) == 600)
        #expect(window.othersActive(than: a, at: now))
        c.inflight.add(5)
        #expect(window.share(of: a, at: now) == 400)
        c.isHeld = true
        #expect(window.share(of: a, at: now) == 600, "a held app takes no other app's share")
        #expect(window.share(of: c, at: now) == 600, "its own share counts itself (and b; a has no work)")
        let later = now.advanced(by: .seconds(3))
        #expect(window.share(of: a, at: later) == 1200, "b's last job was 3 s ago, and c is held")
        gate.setLimit(600)
        #expect(window.share(of: a, at: later) == 600, "the adaptive window's limit is shared")
    }

    /// An app that parks stops parking when asked for its next job once it may.
    @Test func theWindowStopsAnAppParkingWhenItMay() {
        let window = AppWindow(apps: ["a": 0, "b": 0], gate: InflightGate(limit: 100))
        let a = window.load(of: "a")!
        #expect(a.setParking(true))
        #expect(!a.setParking(true), "already parking")
        a.inflight.add(80)
        let now = MonotonicInstant(nanoseconds: 1)
        var (admission, stopped) = window.admission(for: a, pending: 0, at: now)
        #expect(admission.decision == .park && !stopped)
        a.inflight.subtract(40)
        (admission, stopped) = window.admission(for: a, pending: 0, at: now)
        #expect(stopped && admission.decision == .admit && !a.isParking)
        (admission, _) = window.admission(for: a, pending: 70, at: now)
        #expect(admission.decision == .wait, "the run's own pending notifications count")
    }

    @Test func anAppWaitsForAQuantumOfItsShare() async {
        let window = AppWindow(apps: ["a": 0, "b": 0], gate: InflightGate(limit: 3200))
        let a = window.load(of: "a")!
        #expect(AppWindow.quantum(of: 1600) == 100)
        a.inflight.add(1600)
        #expect(await !window.waitForRoom(a, share: 1600, patience: .milliseconds(20)), "no room within the patience")
        a.inflight.subtract(100)
        #expect(await window.waitForRoom(a, share: 1600, patience: .seconds(10)))
    }
}
