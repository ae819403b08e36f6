import Foundation
import ParleyTestSupport
import XCTest

/// PARLEY_MEMBER_MODELS over real HTTP: members see and use only the listed models, admins every
/// model; any other model answers 403 `model_not_allowed` wherever it can be named or is stored.
/// PARLEY_LISTED_MODELS_ONLY (team mode's default): a model `GET /api/models` does not list is refused
/// to everyone, before anything reaches the provider.
final class ModelAccessTests: XCTestCase {
    private var upstream: FakeUpstream!

    override func setUp() async throws {
        upstream = try startUpstream { _ in .openAIChat(tokens: ["ok"]) }
    }

    /// A team Parley offering `openai:fake` and `openai:big` (in that order: `fake` is the default).
    private func parley(memberModels: String?, directory: URL? = nil, _ extra: [String: String] = [:]) throws
        -> TestParley {
        var settings = Team.settings.merging(["PARLEY_OPENAI_BASE_URL": upstream.baseURL + "/v1",
                                              "PARLEY_OPENAI_MODELS": "fake,big"]) { $1 }
        settings["PARLEY_MEMBER_MODELS"] = memberModels
        return try startParley(settings.merging(extra) { $1 }, directory: directory)
    }

    private func modelIDs(_ parley: TestParley, as auth: (String, String)) async throws -> [String] {
        let reply = try await parley.call("GET", "/api/models", as: auth)
        XCTAssertEqual(reply.status, 200, reply.text)
        return (reply.json["models"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
    }

    func testMembersSeeOnlyTheirModelsAndAdminsSeeAll() async throws {
        let restricted = try parley(memberModels: "openai:fake")
        let ids1 = try await modelIDs(restricted, as: try Team.bearer(restricted, "bob"))
        XCTAssertEqual(ids1, ["openai:fake"])
        let ids2 = try await modelIDs(restricted, as: try Team.bearer(restricted, "root", role: .admin))
        XCTAssertEqual(ids2, ["openai:fake", "openai:big"])
        let open = try parley(memberModels: nil)
        let ids3 = try await modelIDs(open, as: try Team.bearer(open, "bob"))
        XCTAssertEqual(ids3, ["openai:fake", "openai:big"], "unset: every model")
        let byName = try parley(memberModels: "big")
        let ids4 = try await modelIDs(byName, as: try Team.bearer(byName, "bob"))
        XCTAssertEqual(ids4, ["openai:big"], "a bare name stands for that model at any provider")
    }

    func testAModelNotAllowedIs403WhereverItIsNamed() async throws {
        let parley = try parley(memberModels: "openai:fake")
        let bob = try Team.bearer(parley, "bob")
        let conversation = try await parley.conversation(as: bob, ["model": "openai:fake"])
        let sent = try await parley.send(as: bob, conversation)
        XCTAssertEqual(sent.status, 201, sent.text)
        let assistant = try XCTUnwrap(sent.assistantID)
        _ = try await parley.finished(assistant, headers: [bob])

        for model in ["openai:big", "big"] {
            let refusals: [(String, String, [String: Any])] = [
                ("POST", "/api/conversations", ["model": model]),
                ("PATCH", "/api/conversations/\(conversation)", ["model": model]),
                ("POST", "/api/conversations/\(conversation)/messages", ["content": "hi", "model": model]),
                ("POST", "/api/messages/\(assistant)/regenerate", ["model": model]),
            ]
            for (method, path, body) in refusals {
                let reply = try await parley.call(method, path, as: bob, json: body)
                XCTAssertEqual(reply.status, 403, "\(method) \(path) \(model): \(reply.text)")
                XCTAssertEqual(reply.errorCode, "model_not_allowed", "\(method) \(path)")
                XCTAssertTrue(reply.errorMessage.contains("PARLEY_MEMBER_MODELS"), reply.text)
            }
        }
        let patched = try await parley.call("PATCH", "/api/conversations/\(conversation)", as: bob, json: ["model": "fake"])
        XCTAssertEqual(patched.status, 200, "a bare name of an allowed model is fine: \(patched.text)")
        let shown = try await parley.call("GET", "/api/conversations/\(conversation)", as: bob)
        XCTAssertEqual((shown.json["messages"] as? [Any])?.count, 2, "no refused send or regenerate stored anything")
        // An unknown model is still 400, whoever asks.
        let unknown = try await parley.call("POST", "/api/conversations", as: bob, json: ["model": "openai:"])
        XCTAssertEqual(unknown.status, 400, unknown.text)
        // The admin may use it.
        let admin = try Team.bearer(parley, "root", role: .admin)
        let adminConversation = try await parley.conversation(as: admin, ["model": "openai:big"])
        let adminSent = try await parley.send(as: admin, adminConversation)
        XCTAssertEqual(adminSent.status, 201, adminSent.text)
        _ = try await parley.finished(try XCTUnwrap(adminSent.assistantID), headers: [admin])
    }

    func testAStoredModelClosedToAMemberIsRefusedNotSwapped() async throws {
        let directory = TestFiles.directory("model-access")
        // Before the list: bob's conversation and its answer use openai:big.
        let before = try parley(memberModels: nil, directory: directory)
        let bob = try Team.bearer(before, "bob")
        let conversation = try await before.conversation(as: bob, ["model": "openai:big"])
        let sent = try await before.send(as: bob, conversation)
        let assistant = try XCTUnwrap(sent.assistantID)
        _ = try await before.finished(assistant, headers: [bob])
        await before.stop()

        let after = try parley(memberModels: "openai:fake", directory: directory)
        let upstreamCalls = upstream.requests.count
        let refusals: [(String, [String: Any])] = [
            ("/api/conversations/\(conversation)/messages", ["content": "again"]),
            ("/api/messages/\(assistant)/regenerate", [:]),
            ("/api/messages/\(assistant)/continue", [:]),
        ]
        for (path, body) in refusals {
            let reply = try await after.call("POST", path, as: bob, json: body)
            XCTAssertEqual(reply.status, 403, "\(path): \(reply.text)")
            XCTAssertEqual(reply.errorCode, "model_not_allowed", path)
        }
        XCTAssertEqual(upstream.requests.count, upstreamCalls, "nothing reached the closed model")
        // Naming an allowed model still works, and the conversation can be moved to one.
        let regenerated = try await after.call("POST", "/api/messages/\(assistant)/regenerate", as: bob,
                                               json: ["model": "openai:fake"])
        XCTAssertEqual(regenerated.status, 201, regenerated.text)
        XCTAssertEqual(regenerated.json["model"] as? String, "openai:fake")
        _ = try await after.finished(try XCTUnwrap(regenerated.json["id"] as? String), headers: [bob])
    }

    func testWhenNothingNamesAModelAMemberGetsTheFirstOneOpenToThem() async throws {
        let parley = try parley(memberModels: "openai:big")  // the server default, openai:fake, is closed
        let bob = try Team.bearer(parley, "bob")
        let conversation = try await parley.conversation(as: bob)
        let sent = try await parley.send(as: bob, conversation)
        XCTAssertEqual(sent.status, 201, sent.text)
        XCTAssertEqual((sent.json["assistant_message"] as? [String: Any])?["model"] as? String, "openai:big")
        _ = try await parley.finished(try XCTUnwrap(sent.assistantID), headers: [bob])
        XCTAssertEqual(upstream.requests.last?.jsonBody?["model"] as? String, "big")
    }

    // MARK: - Listed models only

    private static let unlisted = "openai:gpt-4-unlisted-expensive"

    func testAnUnlistedModelIsRefusedToEveryoneInTeamModeAndNothingReachesTheProvider() async throws {
        let parley = try parley(memberModels: nil)
        let bob = try Team.bearer(parley, "bob"), admin = try Team.bearer(parley, "root", role: .admin)
        var replies: [(auth: (String, String), conversation: String, assistant: String)] = []
        for auth in [bob, admin] {
            let conversation = try await parley.conversation(as: auth, ["model": "openai:fake"])
            let sent = try await parley.send(as: auth, conversation)
            let assistant = try XCTUnwrap(sent.assistantID)
            _ = try await parley.finished(assistant, headers: [auth])
            replies.append((auth, conversation, assistant))
        }
        let upstreamCalls = upstream.requests.count

        for (auth, conversation, assistant) in replies {
            let refusals: [(String, String, [String: Any])] = [
                ("POST", "/api/conversations", ["model": Self.unlisted]),
                ("PATCH", "/api/conversations/\(conversation)", ["model": Self.unlisted]),
                ("POST", "/api/conversations/\(conversation)/messages", ["content": "hi", "model": Self.unlisted]),
                ("POST", "/api/messages/\(assistant)/regenerate", ["model": Self.unlisted]),
            ]
            for (method, path, body) in refusals {
                let reply = try await parley.call(method, path, as: auth, json: body)
                XCTAssertEqual(reply.status, 403, "\(method) \(path): \(reply.text)")
                XCTAssertEqual(reply.errorCode, "model_not_allowed", "\(method) \(path)")
                XCTAssertTrue(reply.errorMessage.contains("PARLEY_LISTED_MODELS_ONLY"), reply.text)
            }
            let openAI = try await parley.call("POST", "/v1/chat/completions", as: auth, json: [
                "model": Self.unlisted, "messages": [["role": "user", "content": "hi"]]])
            XCTAssertEqual(openAI.status, 404, openAI.text)
            let error = try XCTUnwrap(openAI.json["error"] as? [String: Any])
            XCTAssertEqual(error["code"] as? String, "model_not_found")
            XCTAssertEqual(error["type"] as? String, "invalid_request_error")
            XCTAssertEqual(error["param"] as? String, "model")
        }
        XCTAssertEqual(upstream.requests.count, upstreamCalls, "nothing reached the provider")

        // An import naming it keeps its conversation, without the model.
        let at = "2026-01-02T03:04:05.678Z"
        let imported = try await parley.call("POST", "/api/import", as: bob, json: [
            "parley_export": 1, "title": "Old", "model": Self.unlisted, "created_at": at, "updated_at": at,
            "messages": [] as [Any]])
        XCTAssertEqual(imported.status, 201, imported.text)
        let items = try XCTUnwrap(imported.json["items"] as? [[String: Any]])
        XCTAssertTrue(items.first?["model"] is NSNull, imported.text)
        // Listed models, and demo (which sends nothing anywhere), still work.
        let listed = try await parley.conversation(as: admin, ["model": "openai:big"])
        let adminSent = try await parley.send(as: admin, listed)
        XCTAssertEqual(adminSent.status, 201, adminSent.text)
        _ = try await parley.finished(try XCTUnwrap(adminSent.assistantID), headers: [admin])
        let demo = try await parley.call("POST", "/api/conversations", as: bob, json: ["model": "demo"])
        XCTAssertEqual(demo.status, 201, demo.text)
    }

    func testUnlistedModelsAreOpenInLocalModeAndWhenTheSettingIsOff() async throws {
        let local = try startParley(["PARLEY_OPENAI_BASE_URL": upstream.baseURL + "/v1",
                                     "PARLEY_OPENAI_MODELS": "fake"])
        let id = try await local.conversation(["model": Self.unlisted])
        let (_, reply) = try await local.send(id, "hi")
        _ = try await local.finished(reply)
        XCTAssertEqual(upstream.requests.last?.jsonBody?["model"] as? String, "gpt-4-unlisted-expensive",
                       "local mode's default is off: its one user owns the key")

        let off = try parley(memberModels: nil, ["PARLEY_LISTED_MODELS_ONLY": "off"])
        let bob = try Team.bearer(off, "bob")
        let conversation = try await off.call("POST", "/api/conversations", as: bob, json: ["model": Self.unlisted])
        XCTAssertEqual(conversation.status, 201, conversation.text)

        let on = try startParley(["PARLEY_OPENAI_BASE_URL": upstream.baseURL + "/v1", "PARLEY_OPENAI_MODELS": "fake",
                                  "PARLEY_LISTED_MODELS_ONLY": "on"])
        let refused = try await on.call("POST", "/api/conversations", json: ["model": Self.unlisted])
        XCTAssertEqual(refused.status, 403, refused.text)
        XCTAssertEqual(refused.errorCode, "model_not_allowed")
    }
}
