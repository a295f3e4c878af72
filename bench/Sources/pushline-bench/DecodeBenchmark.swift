import Foundation
import PushlineWorker

/// Job decoding cost, per job, for the two job shapes the end-to-end benchmark uses.
enum DecodeBenchmark {
    static func job(tokens: Int, index: Int) -> [UInt8] {
        let list = (0..<tokens).map { "\"" + String(format: "%056x%08x", index, $0) + "\"" }.joined(separator: ",")
        return Array(
            #"{"id":"bench-\#(index)","tokens":[\#(list)],"push_type":"alert","priority":10,"payload":{"aps":{"alert":{"title":"Sale","body":"50% off today"},"sound":"default"},"campaign":"c42"}}"#
                .utf8
        )
    }

    static func run(iterations: Int) -> String {
        let decoder = JobDecoder(bundleIDs: ["default": "com.example.app"])
        var results: [String] = []
        for tokens in [1, 100] {
            let jobs = (0..<256).map { job(tokens: tokens, index: $0) }
            let rounds = tokens == 1 ? iterations : max(1, iterations / 50)
            var accepted = 0
            // Warm up.
            for job in jobs { if case .success = decoder.decode(job) { accepted += 1 } }
            let started = ContinuousClock.now
            for round in 0..<rounds {
                if case .success(let decoded) = decoder.decode(jobs[round & 255]) { accepted += decoded.deviceTokens.count }
            }
            let elapsed = ContinuousClock.now - started
            let nanoseconds = Double(elapsed.components.seconds) * 1e9 + Double(elapsed.components.attoseconds) / 1e9
            let perJob = nanoseconds / Double(rounds)
            results.append(
                #"{"benchmark":"decode","tokens_per_job":\#(tokens),"jobs":\#(rounds),"ns_per_job":\#(Int(perJob)),"ns_per_token":\#(Int(perJob / Double(tokens))),"check":\#(accepted > 0)}"#
            )
        }
        return results.joined(separator: "\n")
    }
}
