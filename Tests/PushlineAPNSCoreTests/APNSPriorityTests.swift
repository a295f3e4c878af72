import PushlineAPNSCore
import Testing

@Suite struct APNSPriorityTests {
    /// The constant header values are the numbers APNs expects.
    @Test func headerValuesAreTheRawValues() {
        for priority in APNSPriority.allCases {
            #expect(priority.headerValue == String(priority.rawValue))
        }
    }
}
