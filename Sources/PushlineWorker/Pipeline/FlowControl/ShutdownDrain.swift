/// How the pipeline's graceful shutdown waits for the jobs it started: until none is left, until
/// `timeout` (`worker.shutdown_timeout_ms`), or until all that is left is held by an APNs pool.
///
/// Work of a held app will not finish soon: waiting for it only delays the handover to the next
/// member of the group. `onlyHeldWorkLeft` is looked at again each time a hold begins or ends
/// (`holdChanged`) and each time a job ends (a pool goes idle before its last job ends).
struct ShutdownDrain: Sendable {
    enum Ending: Sendable, Equatable {
        case finished
        case onlyHeldWorkLeft
        case timedOut
    }

    let activeJobs: WaitableCount
    let timeout: Duration
    let onlyHeldWorkLeft: @Sendable () -> Bool
    let holdChanged: ChangeSignal

    /// Waits as above; a cancelled wait ends as `timedOut`.
    func run() async -> Ending {
        let deadline = ContinuousClock.now + timeout
        let drain = self
        let ending: Ending?? = await withTaskGroup(of: Ending?.self) { group in
            group.addTask { await drain.activeJobs.wait(atMost: 0) ? .finished : nil }
            group.addTask { await drain.waitUntilOnlyHeldWorkLeft() ? .onlyHeldWorkLeft : nil }
            group.addTask { (try? await Task.sleep(until: deadline, clock: .continuous)) == nil ? nil : .timedOut }
            let first = await group.next()
            group.cancelAll()
            return first
        }
        return (ending ?? nil) ?? .timedOut
    }

    private func waitUntilOnlyHeldWorkLeft() async -> Bool {
        while !Task.isCancelled {
            let seen = holdChanged.generation
            let jobs = activeJobs.value
            if onlyHeldWorkLeft() { return true }
            // Whichever comes first: a hold change, or one job fewer.
            let drain = self
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await drain.holdChanged.wait(after: seen) }
                group.addTask { _ = await drain.activeJobs.wait(atMost: jobs - 1) }
                await group.next()
                group.cancelAll()
            }
        }
        return false
    }
}
