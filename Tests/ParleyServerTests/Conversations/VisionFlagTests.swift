import Foundation
import ParleyTestSupport
import XCTest

/// `GET /api/models` says per model whether it is sent images: PARLEY_VISION_MODELS (ids, `*`
/// patterns), none by default, the demo model always.
final class VisionFlagTests: XCTestCase {
    private func visionByID(_ parley: TestParley) async throws -> [String: Bool] {
        let reply = try await parley.call("GET", "/api/models")
        XCTAssertEqual(reply.status, 200, reply.text)
        let models = try XCTUnwrap(reply.json["models"] as? [[String: Any]])
        return Dictionary(uniqueKeysWithValues: models.compactMap { model in
            (model["id"] as? String).map { ($0, model["vision"] as? Bool ?? false) }
        })
    }

    func testTheDemoModelSees() async throws {
        let parley = try startParley()
        let vision = try await visionByID(parley)
        XCTAssertEqual(vision, ["demo": true])
    }

    func testNoOtherModelSeesByDefault() async throws {
        let upstream = try startUpstream()
        let parley = try startParley(["PARLEY_OPENAI_BASE_URL": upstream.baseURL + "/v1",
                                      "PARLEY_OPENAI_MODELS": "gpt-4o,llama3"])
        let vision = try await visionByID(parley)
        XCTAssertEqual(vision, ["openai:gpt-4o": false, "openai:llama3": false])
    }

    func testPatternsAndIDsChooseTheModelsThatSee() async throws {
        let upstream = try startUpstream()
        let settings = ["PARLEY_OPENAI_BASE_URL": upstream.baseURL + "/v1",
                        "PARLEY_OPENAI_MODELS": "gpt-4o,gpt-4o-mini,llama3,llava"]
        let pattern = try startParley(settings.merging(["PARLEY_VISION_MODELS": "openai:gpt-4o*, llava"]) { $1 })
        let chosen = try await visionByID(pattern)
        XCTAssertEqual(chosen, ["openai:gpt-4o": true, "openai:gpt-4o-mini": true, "openai:llama3": false,
                                "openai:llava": true])
        let every = try startParley(settings.merging(["PARLEY_VISION_MODELS": "*"]) { $1 })
        let all = try await visionByID(every)
        XCTAssertEqual(Set(all.values), [true])
        XCTAssertEqual(all.count, 4)
    }
}
