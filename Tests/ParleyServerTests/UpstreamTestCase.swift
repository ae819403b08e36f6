import ParleyTestSupport
import XCTest

/// Base for tests of a Parley in front of a fake upstream: both are fresh for each test and both
/// are stopped after it. Subclasses name their settings.
class UpstreamTestCase: XCTestCase {
    var upstream: FakeUpstream!
    var parley: TestParley!

    /// The environment of the Parley each test starts with.
    var settings: [String: String] { [:] }

    override func setUp() async throws {
        upstream = try FakeUpstream()
        parley = try TestParley(upstream: upstream, settings)
    }

    override func tearDown() async throws {
        await parley?.stop()
        upstream?.shutdown()
        // XCTest keeps test case instances for the whole run: let the servers go now.
        parley = nil
        upstream = nil
    }
}
