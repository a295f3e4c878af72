import Testing

@testable import PushlineWorker

@Suite struct GroupStatisticsTests {
    /// The parts of librdkafka's statistics the worker reads (shape as librdkafka 2.x writes it).
    static let json = """
        {"name":"rdkafka#consumer-1","type":"consumer",
         "cgrp":{"state":"up","stateage":5004,"join_state":"wait-join","rebalance_age":7000,
                 "rebalance_cnt":3,"rebalance_reason":"group rejoin","assignment_size":0},
         "topics":{"push.jobs":{"topic":"push.jobs","partitions":{
            "0":{"partition":0,"fetch_state":"active","hi_offset":1000,"lo_offset":0,
                 "committed_offset":400,"consumer_lag":600},
            "1":{"partition":1,"fetch_state":"active","hi_offset":800,"lo_offset":100,
                 "committed_offset":-1001,"consumer_lag":-1},
            "2":{"partition":2,"fetch_state":"none","hi_offset":900,"lo_offset":0,
                 "committed_offset":50,"consumer_lag":-1},
            "-1":{"partition":-1,"fetch_state":"none","hi_offset":-1,"lo_offset":-1,
                 "committed_offset":-1001,"consumer_lag":-1}}}}}
        """

    @Test func readsTheGroupAndEachPartitionsLagFromItsCommittedOffset() throws {
        let statistics = try #require(GroupStatistics.parse(Self.json))
        #expect(statistics.joinState == "wait-join")
        #expect(statistics.state == "up")
        #expect(statistics.rebalanceCount == 3)
        #expect(statistics.rebalanceReason == "group rejoin")
        #expect(statistics.partitions.map(\.partition) == [0, 1, 2], "the unassigned-partition entry (-1) is not a partition")
        let byPartition = Dictionary(uniqueKeysWithValues: statistics.partitions.map { ($0.partition, $0) })
        #expect(byPartition[0]?.lag == 600)
        #expect(byPartition[0]?.committed == 400)
        // Nothing committed: librdkafka says -1; the lag is the whole log from its start.
        #expect(byPartition[1]?.lag == 700)
        #expect(byPartition[1]?.committed == nil)
        // Not assigned here: 0, so that a moved partition is not counted twice.
        #expect(byPartition[2]?.lag == 0)
        #expect(byPartition[2]?.assigned == false)
        #expect(statistics.assigned.map(\.partition) == [0, 1])
    }

    @Test func notStatistics() {
        #expect(GroupStatistics.parse("not json") == nil)
    }
}
