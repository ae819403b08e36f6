import ParleyProviders
import XCTest

/// PARLEY_VISION_MODELS: ids, `*` patterns and bare names; nobody sees by default but the demo.
final class VisionModelsTests: XCTestCase {
    func testNothingSeesByDefaultButTheDemo() {
        let none = VisionModels()
        XCTAssertTrue(none.canSee("demo"))
        XCTAssertFalse(none.canSee("openai:gpt-4o"))
        XCTAssertFalse(VisionModels(setting: " , ").canSee("openai:gpt-4o"))
    }

    func testExactIDs() {
        let vision = VisionModels(setting: "openai:gpt-4o, anthropic:claude-x")
        XCTAssertEqual(vision.patterns, ["openai:gpt-4o", "anthropic:claude-x"])
        XCTAssertTrue(vision.canSee("openai:gpt-4o"))
        XCTAssertTrue(vision.canSee("anthropic:claude-x"))
        XCTAssertFalse(vision.canSee("openai:gpt-4o-mini"), "an id is matched whole")
        XCTAssertFalse(vision.canSee("anthropic:gpt-4o"), "the provider is part of the id")
    }

    func testStarPatterns() {
        let provider = VisionModels(setting: "openai:*")
        XCTAssertTrue(provider.canSee("openai:gpt-4o"))
        XCTAssertTrue(provider.canSee("openai:"), "* matches nothing too")
        XCTAssertFalse(provider.canSee("anthropic:claude-x"))
        let family = VisionModels(setting: "anthropic:claude-*-4*")
        XCTAssertTrue(family.canSee("anthropic:claude-sonnet-4-5"))
        XCTAssertFalse(family.canSee("anthropic:claude-3-haiku"))
        let every = VisionModels(setting: "*")
        XCTAssertTrue(every.canSee("openai:llama3"))
        XCTAssertTrue(every.canSee("anthropic:claude-x"))
    }

    func testABareNameMeansThatModelAtAnyProvider() {
        let vision = VisionModels(setting: "llava*,gpt-4o")
        XCTAssertTrue(vision.canSee("openai:llava-1.6"))
        XCTAssertTrue(vision.canSee("other:gpt-4o"))
        XCTAssertFalse(vision.canSee("openai:gpt-4o-mini"))
        XCTAssertFalse(vision.canSee("openai:llama3"))
    }

    func testTheRegistryResolvesBareNamesBeforeAsking() throws {
        let registry = ProviderRegistry(
            providers: [OpenAICompatibleProvider(baseURL: "http://127.0.0.1:9", models: ["gpt-4o", "llama3"], client: sharedClient)],
            configuredModels: [ModelInfo(provider: "openai", model: "gpt-4o", label: "gpt-4o"),
                               ModelInfo(provider: "openai", model: "llama3", label: "llama3")],
            vision: VisionModels(setting: "openai:gpt-4o"))
        XCTAssertTrue(registry.canSeeImages("openai:gpt-4o"))
        XCTAssertTrue(registry.canSeeImages("gpt-4o"), "the bare name is openai:gpt-4o")
        XCTAssertFalse(registry.canSeeImages("llama3"))
        XCTAssertTrue(registry.canSeeImages("demo"))
        XCTAssertFalse(registry.canSeeImages("unknown:model"))
    }
}
