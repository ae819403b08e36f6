import ParleyProviders
import XCTest

/// `ModelID`: the one place a `provider:model` id is made and split.
final class ModelIDTests: XCTestCase {
    func testAnIdIsSplitAtItsFirstColonAndMadeBackWhole() throws {
        for (id, provider, model) in [("openai:llama3", "openai", "llama3"), ("openai:ns:model:7b", "openai", "ns:model:7b"),
                                      ("openai:", "openai", ""), (":x", "", "x")] {
            let parts = try XCTUnwrap(ModelID.split(id), id)
            XCTAssertEqual(String(parts.provider), provider, id)
            XCTAssertEqual(String(parts.model), model, id)
            XCTAssertEqual(ModelID.make(provider: provider, model: model), id)
        }
    }

    func testAnIdWithoutAColonHasNoProvider() {
        XCTAssertNil(ModelID.split("demo"))
        XCTAssertNil(ModelID.split("llama3"))
        XCTAssertNil(ModelID.split(""))
    }

    func testAListedModelsIdIsMadeByModelID() {
        XCTAssertEqual(ModelInfo(provider: "anthropic", model: "claude-x", label: "Claude").id, "anthropic:claude-x")
    }
}
