import Foundation
import ParleyTestSupport
import XCTest

/// A conversation's `temperature`, `top_p` and `max_tokens`: set on create and PATCH, cleared with
/// null, range-checked (400 naming the field), scoped to the owner, and sent to both providers.
final class GenerationSettingsAPITests: XCTestCase {
    func testSettingsAreSetChangedAndClearedAndShownEverywhere() async throws {
        let parley = try startParley()
        let created = try await parley.call("POST", "/api/conversations",
                                            json: ["temperature": 0.7, "top_p": 0.9, "max_tokens": 256])
        XCTAssertEqual(created.status, 201, created.text)
        XCTAssertEqual(created.json["temperature"] as? Double, 0.7)
        XCTAssertEqual(created.json["top_p"] as? Double, 0.9)
        XCTAssertEqual(created.json["max_tokens"] as? Int, 256)
        let id = try XCTUnwrap(created.json["id"] as? String)

        let changed = try await parley.call("PATCH", "/api/conversations/\(id)", json: ["temperature": 0, "top_p": nil])
        XCTAssertEqual(changed.status, 200, changed.text)
        XCTAssertEqual((changed.json["temperature"] as? NSNumber)?.doubleValue, 0)
        XCTAssertTrue(changed.json["top_p"] is NSNull, "null clears a setting")
        XCTAssertEqual(changed.json["max_tokens"] as? Int, 256, "absent: unchanged")

        let renamed = try await parley.call("PATCH", "/api/conversations/\(id)", json: ["title": "renamed"])
        XCTAssertEqual(renamed.json["max_tokens"] as? Int, 256, "a PATCH without settings keeps them")
        let shown = try await parley.call("GET", "/api/conversations/\(id)")
        XCTAssertEqual((shown.json["temperature"] as? NSNumber)?.doubleValue, 0)
        let listed = try await parley.call("GET", "/api/conversations")
        XCTAssertEqual(listed.items.first?["max_tokens"] as? Int, 256)
        let plain = try await parley.call("POST", "/api/conversations", json: [:])
        for field in ["temperature", "top_p", "max_tokens"] {
            XCTAssertTrue(plain.json[field] is NSNull, "\(field) is null until set")
        }
    }

    func testValuesOutOfRangeOrOfTheWrongTypeAre400NamingTheField() async throws {
        let parley = try startParley(["PARLEY_MAX_TOKENS_LIMIT": "1000"])
        let id = try await parley.conversation()
        let bad: [(String, Any)] = [("temperature", 2.01), ("temperature", -0.5), ("temperature", "warm"),
                                    ("top_p", 1.5), ("top_p", -1), ("top_p", true),
                                    ("max_tokens", 0), ("max_tokens", 1001), ("max_tokens", 2.5), ("max_tokens", "10")]
        for (field, value) in bad {
            for (method, path) in [("POST", "/api/conversations"), ("PATCH", "/api/conversations/\(id)")] {
                let reply = try await parley.call(method, path, json: [field: value])
                XCTAssertEqual(reply.status, 400, "\(method) \(field)=\(value): \(reply.text)")
                XCTAssertEqual(reply.errorCode, "invalid_request")
                XCTAssertTrue(reply.errorMessage.contains("'\(field)'"), reply.errorMessage)
            }
        }
        let limit = try await parley.call("PATCH", "/api/conversations/\(id)", json: ["max_tokens": 1001])
        XCTAssertTrue(limit.errorMessage.contains("PARLEY_MAX_TOKENS_LIMIT"), limit.errorMessage)
        let edges = try await parley.call("PATCH", "/api/conversations/\(id)",
                                          json: ["temperature": 2, "top_p": 0, "max_tokens": 1000])
        XCTAssertEqual(edges.status, 200, "the ends of each range are allowed: \(edges.text)")
        let list = try await parley.call("GET", "/api/conversations")
        XCTAssertEqual(list.items.count, 1, "no refused create stored a conversation")
    }

    func testAnotherUsersConversationIs404() async throws {
        let parley = try startTeamParley()
        let alice = try Team.bearer(parley, "alice"), bob = try Team.bearer(parley, "bob")
        let id = try await parley.conversation(as: alice, ["temperature": 0.5])
        let foreign = try await parley.call("PATCH", "/api/conversations/\(id)", as: bob, json: ["temperature": 1.0])
        XCTAssertEqual(foreign.status, 404, foreign.text)
        let mine = try await parley.call("GET", "/api/conversations/\(id)", as: alice)
        XCTAssertEqual(mine.json["temperature"] as? Double, 0.5, "unchanged by the refused PATCH")
    }

    func testTheSettingsReachAnOpenAICompatibleProviderOnSendAndRegenerate() async throws {
        let upstream = try startUpstream()
        upstream.enqueue(UpstreamStreams.complete(["one"]), UpstreamStreams.complete(["two"]),
                         UpstreamStreams.complete(["three"]))
        let parley = try startParley(upstream: upstream)
        let id = try await parley.conversation(["model": "openai:fake", "temperature": 0.3, "top_p": 0.8,
                                                "max_tokens": 64])
        let (_, first) = try await parley.send(id, "hi")
        _ = try await parley.finished(first)
        let regenerated = try await parley.call("POST", "/api/messages/\(first)/regenerate", json: [:])
        _ = try await parley.finished(try XCTUnwrap(regenerated.json["id"] as? String))
        for request in upstream.requests {
            let body = try XCTUnwrap(request.jsonBody)
            XCTAssertEqual(body["temperature"] as? Double, 0.3)
            XCTAssertEqual(body["top_p"] as? Double, 0.8)
            XCTAssertEqual(body["max_tokens"] as? Int, 64)
        }
        XCTAssertEqual(upstream.requests.count, 2)
        _ = try await parley.call("PATCH", "/api/conversations/\(id)",
                                  json: ["temperature": nil, "top_p": nil, "max_tokens": nil])
        let (_, third) = try await parley.send(id, "again")
        _ = try await parley.finished(third)
        let cleared = try XCTUnwrap(upstream.requests.last?.jsonBody)
        for field in ["temperature", "top_p", "max_tokens"] {
            XCTAssertNil(cleared[field], "\(field) unset: left to the provider")
        }
    }

    func testTheSettingsReachAnthropic() async throws {
        let upstream = try startUpstream()
        upstream.enqueue(.anthropicMessages(tokens: ["Hi"]))
        let parley = try startParley(["PARLEY_ANTHROPIC_BASE_URL": upstream.baseURL, "PARLEY_ANTHROPIC_API_KEY": "k",
                                      "PARLEY_ANTHROPIC_MODELS": "claude-test"])
        let id = try await parley.conversation(["model": "anthropic:claude-test", "temperature": 1.5, "top_p": 0.7,
                                                "max_tokens": 99])
        let (_, reply) = try await parley.send(id, "hi")
        let stored = try await parley.finished(reply)
        XCTAssertEqual(stored["content"] as? String, "Hi")
        let body = try XCTUnwrap(upstream.requests.last?.jsonBody)
        XCTAssertEqual((body["temperature"] as? NSNumber)?.doubleValue, 1, "Anthropic's scale ends at 1")
        XCTAssertEqual(body["top_p"] as? Double, 0.7)
        XCTAssertEqual(body["max_tokens"] as? Int, 99)
    }
}
