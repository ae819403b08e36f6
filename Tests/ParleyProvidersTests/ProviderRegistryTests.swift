import ParleyProviders
import ParleyTestSupport
import ParleyUpstream
import XCTest

final class ProviderRegistryTests: XCTestCase {
    private let client = sharedClient

    func testConfigurationFromEnvironment() throws {
        let configuration = try ProviderConfiguration(environment: [
            "PARLEY_OPENAI_BASE_URL": "http://127.0.0.1:8000/v1",
            "PARLEY_OPENAI_API_KEY": "k1",
            "PARLEY_OPENAI_MODELS": " llama3, qwen ,,",
            "PARLEY_ANTHROPIC_API_KEY": "k2",
            "PARLEY_ANTHROPIC_MODELS": "claude-x",
            "PARLEY_DEMO_TOKENS_PER_SECOND": "0",
            "PARLEY_UPSTREAM_CONNECT_TIMEOUT": "2.5",
            "PARLEY_UPSTREAM_IDLE_TIMEOUT": "30",
            "PARLEY_UPSTREAM_MAX_BYTES": "1000",
        ])
        XCTAssertEqual(configuration.openAI, .init(baseURL: "http://127.0.0.1:8000/v1", apiKey: "k1", models: ["llama3", "qwen"]))
        XCTAssertEqual(configuration.anthropic, .init(baseURL: "https://api.anthropic.com", apiKey: "k2", models: ["claude-x"]))
        XCTAssertEqual(configuration.demoTokensPerSecond, 0)
        XCTAssertEqual(configuration.limits, UpstreamLimits(connectTimeout: .seconds(2.5), idleTimeout: .seconds(30), maxResponseBytes: 1000))
    }

    func testDefaultsWithEmptyEnvironment() throws {
        let configuration = try ProviderConfiguration(environment: [:])
        XCTAssertNil(configuration.openAI)
        XCTAssertNil(configuration.anthropic)
        XCTAssertEqual(configuration.limits.idleTimeout, .seconds(60))
        XCTAssertEqual(configuration.demoTokensPerSecond, 30)
    }

    func testMalformedNumberIsATypedErrorNamingTheVariable() {
        XCTAssertThrowsError(try ProviderConfiguration(environment: ["PARLEY_UPSTREAM_IDLE_TIMEOUT": "soon"])) { error in
            XCTAssertEqual(error as? ProviderConfigurationError, .invalidValue(name: "PARLEY_UPSTREAM_IDLE_TIMEOUT", value: "soon"))
        }
    }

    /// One failed `GET /models` must not empty the list (with PARLEY_LISTED_MODELS_ONLY it would close
    /// every model): the provider counts with its last good listing until one succeeds again.
    func testAFailedListingKeepsTheProvidersLastGoodOne() async throws {
        let fake = try FakeUpstream()
        defer { fake.shutdown() }
        fake.enqueue(.json(#"{"data":[{"id":"fake"},{"id":"big"}]}"#))  // then the empty queue answers 500
        let provider = OpenAICompatibleProvider(baseURL: fake.baseURL + "/v1", client: client)
        let registry = ProviderRegistry(providers: [provider], modelListLifetime: .zero)
        let first = await registry.models().map(\.id)
        XCTAssertEqual(first, ["openai:fake", "openai:big"])
        let afterFailure = await registry.models().map(\.id)
        XCTAssertEqual(afterFailure, ["openai:fake", "openai:big"])
        XCTAssertEqual(fake.requests.count, 2, "the model server was asked again, and failed")
        fake.enqueue(.json(#"{"data":[{"id":"new"}]}"#))
        let renewed = await registry.models().map(\.id)
        XCTAssertEqual(renewed, ["openai:new"], "a good listing replaces the last one")
    }

    func testOnlyDemoIsListedWhenNothingIsConfigured() async throws {
        let registry = ProviderRegistry(configuration: try ProviderConfiguration(environment: [:]), client: client)
        let models = await registry.models()
        XCTAssertEqual(models, [ModelInfo(id: "demo", provider: "demo", label: "Demo model (built-in, no LLM)")])
        let defaultID = await registry.defaultModelID()
        XCTAssertEqual(defaultID, "demo")
    }

    func testConfiguredProvidersAreListedAndDemoIsStillAccepted() async throws {
        let registry = ProviderRegistry(configuration: try ProviderConfiguration(environment: [
            "PARLEY_OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "PARLEY_OPENAI_MODELS": "llama3,shared",
            "PARLEY_ANTHROPIC_API_KEY": "k", "PARLEY_ANTHROPIC_MODELS": "claude-x,shared",
        ]), client: client)
        let ids = await registry.models().map(\.id)
        XCTAssertEqual(ids, ["openai:llama3", "openai:shared", "anthropic:claude-x", "anthropic:shared"])
        let defaultID = await registry.defaultModelID()
        XCTAssertEqual(defaultID, "openai:llama3")
        XCTAssertEqual(registry.resolve("demo")?.provider.name, "demo")
        XCTAssertEqual(registry.resolve("openai:llama3")?.model, "llama3")
        XCTAssertEqual(registry.resolve("anthropic:anything")?.provider.name, "anthropic")
        XCTAssertEqual(registry.resolve("claude-x")?.provider.name, "anthropic")
        XCTAssertNil(registry.resolve("shared"), "ambiguous unprefixed name")
        XCTAssertNil(registry.resolve("nope"))
        XCTAssertNil(registry.resolve("other:x"))
    }

    func testModelsAreFetchedFromTheServerWhenNotConfigured() async throws {
        let fake = try FakeUpstream()
        fake.enqueue(.json(#"{"data":[{"id":"served-model"}]}"#))
        let registry = ProviderRegistry(configuration: try ProviderConfiguration(environment: ["PARLEY_OPENAI_BASE_URL": fake.baseURL]),
                                        client: client)
        XCTAssertNil(registry.resolve("served-model"))
        let ids = await registry.models().map(\.id)
        XCTAssertEqual(ids, ["openai:served-model"])
        XCTAssertEqual(registry.resolve("served-model")?.model, "served-model")
    }

    func testAModelListingIsReusedInsteadOfAskingTheServerEveryTime() async throws {
        let fake = try FakeUpstream()
        fake.enqueue(.json(#"{"data":[{"id":"served-model"}]}"#))
        let registry = ProviderRegistry(configuration: try ProviderConfiguration(environment: ["PARLEY_OPENAI_BASE_URL": fake.baseURL]),
                                        client: client)
        for _ in 0..<5 {
            let ids = await registry.models().map(\.id)
            XCTAssertEqual(ids, ["openai:served-model"])
        }
        XCTAssertEqual(fake.requests.count, 1)
    }
}
