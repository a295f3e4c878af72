import Foundation
import PushlineAPNSCore
import PushlineWorker

/// A deterministic fuzz run of the job decoder: `count` mutations (byte flips, deletions,
/// insertions, splices of JSON fragments) of a few seed jobs. Every input must be decoded or
/// rejected with a reason; a crash or a hang ends the process, which the caller sees.
enum FuzzBenchmark {
    static let seeds: [[UInt8]] = [
        #"{"id":"c1","tokens":["\#(String(repeating: "ab", count: 32))","00ff"],"priority":10,"payload":{"aps":{"alert":"hi","n":[1,2.5e3,null,true]}}}"#,
        #"{"id":"c2","token":"\#(String(repeating: "cd", count: 32))","push_type":"voip","expiration":0,"collapse_id":"x","deadline":"2030-01-01T00:00:00Z","payload":{"aps":{}}}"#,
        #"{"id":"c3","tokens":[],"app":"other","payload":{"a":"\u00e9\ud83d\ude00\/"}}"#,
    ].map { Array($0.utf8) }

    static let fragments: [[UInt8]] = [
        "{", "}", "[", "]", "\"", "\\", ",", ":", "null", "1e999", "-0", "\u{0}", "\\u0000", "\\ud800", "{\"a\":", "[[[[[[", "\u{FF}",
    ].map { Array($0.utf8) }

    static func run(count: Int) -> String {
        let decoder = JobDecoder(bundleIDs: ["default": "com.example.app"])
        var generator = SplitMix64(seed: 0x5eed_f00d)
        var decoded = 0
        var rejected = 0
        var emptyReason = 0
        let started = ContinuousClock.now
        for index in 0..<count {
            var record = seeds[index % seeds.count]
            for _ in 0..<Int(generator.next() % 6 + 1) {
                let position = record.isEmpty ? 0 : Int(generator.next() % UInt64(record.count))
                switch generator.next() % 4 {
                case 0 where !record.isEmpty: record[position] = UInt8(truncatingIfNeeded: generator.next())
                case 1 where !record.isEmpty: record.remove(at: position)
                case 2: record.insert(UInt8(truncatingIfNeeded: generator.next()), at: position)
                default: record.insert(contentsOf: fragments[Int(generator.next() % UInt64(fragments.count))], at: position)
                }
            }
            switch decoder.decode(record) {
            case .success: decoded += 1
            case .failure(let rejection):
                rejected += 1
                if rejection.detail.isEmpty { emptyReason += 1 }
            }
        }
        let elapsed = ContinuousClock.now - started
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return
            #"{"benchmark":"fuzz","inputs":\#(count),"decoded":\#(decoded),"rejected":\#(rejected),"rejected_without_reason":\#(emptyReason),"seconds":\#(String(format: "%.1f", seconds))}"#
    }
}
