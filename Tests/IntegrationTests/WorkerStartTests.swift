import Foundation
import PushlineTestSupport
import Testing

/// The worker's start as an operator's fleet meets it: a SIGTERM at any moment of it stops the
/// worker cleanly (a rollout that changes its mind, a node drained at once), and the control topic
/// is created by the first worker only.
@Suite(.serialized, .timeLimit(.minutes(4))) struct WorkerStartTests {
    /// SIGTERM 5 s, 1 s and at once after the worker's first log line (its configuration is
    /// loaded; its Kafka clients, the control topic's boot wait and the group's start come next):
    /// while it joins the group, while it reads the control topic, and while it makes its services.
    /// The boot wait (up to 10 s) once ran before the signals were handled, and a SIGTERM then
    /// killed the process. Each exits 0 and says it stopped cleanly. (Timed from the first line,
    /// not from the spawn: on CI's loaded cores the debug binary once took over a second to reach
    /// its first instruction, where no program can catch a signal.)
    @Test func aSIGTERMAtAnyMomentOfTheStartStopsTheWorkerCleanly() async throws {
        let harness = try await Harness.start()
        var logs: [String] = []
        for delay in [Duration.seconds(5), .seconds(1), .zero] {
            let worker = try harness.startWorker()
            try await waitUntil("the worker's first log line", timeout: .seconds(60), interval: .milliseconds(5)) { !worker.log.isEmpty }
            if delay > .zero { try await Task.sleep(for: delay) }
            worker.terminate()
            let status = await worker.waitForExit(timeout: .seconds(60))
            #expect(status == 0, "SIGTERM \(delay) after the first line: exit \(String(describing: status)); \(worker.log.suffix(2000))")
            #expect(worker.log.contains("worker stopped cleanly"), "SIGTERM \(delay) after the first line: \(worker.log.suffix(2000))")
            logs.append(worker.log)
        }
        // The first worker created the control topic; the others found it and asked nothing.
        #expect(logs[0].contains("topic created"), "\(logs[0].suffix(2000))")
        #expect(!logs[1].contains("topic created") && !logs[2].contains("topic created"))
        await harness.stop()
    }
}
