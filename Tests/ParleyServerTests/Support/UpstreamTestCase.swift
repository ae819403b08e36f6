import ParleyTestSupport
import XCTest

/// Base for tests of a Parley in front of a fake upstream: both are fresh for each test and both
/// are stopped after it, whatever its outcome (`startParley`/`startUpstream` register the teardown).
/// Subclasses name their settings; a test that needs other settings replaces `parley` with
/// `startParley`, which stops the new one too.
class UpstreamTestCase: XCTestCase {
    var upstream: FakeUpstream!
    var parley: TestParley!

    /// The environment of the Parley each test starts with.
    var settings: [String: String] { [:] }

    override func setUp() async throws {
        upstream = try startUpstream()
        parley = try startParley(upstream: upstream, settings)
    }

    override func tearDown() async throws {
        // XCTest keeps test case instances for the whole run: let the servers go now (the teardown
        // blocks registered at start stop them).
        parley = nil
        upstream = nil
    }
}
