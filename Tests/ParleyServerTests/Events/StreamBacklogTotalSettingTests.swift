import ParleyServer
import XCTest

/// `PARLEY_STREAM_BACKLOG_TOTAL_BYTES`: documented default, read from the environment or its flag,
/// refused with its name when out of range.
final class StreamBacklogTotalSettingTests: XCTestCase {
    func testTheDefaultIs256MiB() throws {
        let configuration = try ParleyConfiguration(environment: [:], arguments: [])
        XCTAssertEqual(configuration.http.streamBacklogTotalLimit, 256 << 20)
    }

    func testTheEnvironmentAndTheFlagSetIt() throws {
        let fromEnvironment = try ParleyConfiguration(
            environment: ["PARLEY_STREAM_BACKLOG_TOTAL_BYTES": "1048576"], arguments: [])
        XCTAssertEqual(fromEnvironment.http.streamBacklogTotalLimit, 1 << 20)
        let fromFlag = try ParleyConfiguration(
            environment: ["PARLEY_STREAM_BACKLOG_TOTAL_BYTES": "1048576"],
            arguments: ["--stream-backlog-total-bytes", "2097152"])
        XCTAssertEqual(fromFlag.http.streamBacklogTotalLimit, 2 << 20)
    }

    func testOutOfRangeValuesAreRefusedWithTheName() {
        for value in ["0", "1024", "-5", "lots", String(Int64(1) << 41)] {
            XCTAssertThrowsError(try ParleyConfiguration(
                environment: ["PARLEY_STREAM_BACKLOG_TOTAL_BYTES": value], arguments: [])) { error in
                XCTAssertTrue("\(error)".contains("PARLEY_STREAM_BACKLOG_TOTAL_BYTES"), "\(error)")
            }
        }
    }
}
