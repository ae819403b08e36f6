import Foundation
@testable import ParleyStore
import ParleyTestSupport
import XCTest

/// Token counts are bounded per reply (`ReplyTokens.range`, 0...1e9): an import outside it is a 400
/// naming the field, a provider's figures are clamped into it, and no total overflows or goes
/// negative, whatever rows an older version left behind.
final class UsageBoundsTests: XCTestCase {
    private static let maximum = 1_000_000_000

    /// One conversation with a question and `replies` answers to it, each with `usage`.
    private func document(usage: [String: Any], replies: Int = 1) -> [String: Any] {
        let at = "2026-01-02T03:04:05.678Z"
        var messages: [[String: Any]] = [
            ["id": "q", "parent_id": NSNull(), "role": "user", "content": "question", "status": "complete",
             "created_at": at, "updated_at": at]]
        for index in 0..<replies {
            messages.append(["id": "a\(index)", "parent_id": "q", "role": "assistant", "content": "answer",
                             "status": "complete", "usage": usage, "created_at": at, "updated_at": at])
        }
        return ["parley_export": 1, "title": "Imported", "created_at": at, "updated_at": at, "messages": messages]
    }

    func testAnImportedCountOutsideTheRangeIsRefusedNamingTheField() async throws {
        let parley = try startParley()
        let negative = try await parley.call("POST", "/api/import",
                                             json: document(usage: ["output_tokens": -1_000_000_000]))
        XCTAssertEqual(negative.status, 400, negative.text)
        XCTAssertEqual(negative.errorCode, "invalid_import")
        XCTAssertTrue(negative.errorMessage.hasPrefix("messages[1].usage.output_tokens: "), negative.errorMessage)
        let tooMany = try await parley.call("POST", "/api/import", json: [
            "parley_export": 1, "conversations": [document(usage: ["input_tokens": Self.maximum + 1])]])
        XCTAssertEqual(tooMany.status, 400, tooMany.text)
        XCTAssertEqual(tooMany.errorCode, "invalid_import")
        XCTAssertTrue(tooMany.errorMessage.hasPrefix("conversations[0].messages[1].usage.input_tokens: "),
                      tooMany.errorMessage)
        XCTAssertTrue(tooMany.errorMessage.contains("1000000000"), tooMany.errorMessage)
        let listed = try await parley.call("GET", "/api/conversations")
        XCTAssertEqual(listed.items.count, 0, "nothing of a refused file is imported")

        let edge = try await parley.call("POST", "/api/import",
                                         json: document(usage: ["input_tokens": 0, "output_tokens": Self.maximum]))
        XCTAssertEqual(edge.status, 201, "both ends of the range are counts: \(edge.text)")
    }

    func testAProvidersOutOfRangeFiguresAreStoredBounded() async throws {
        let upstream = try startUpstream()
        let finish = "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n"
            + "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":-5,\"completion_tokens\":1000000000000}}\n\n"
            + "data: [DONE]\n\n"
        upstream.enqueue(.eventStream(writes: [UpstreamStreams.chunk("hi"), finish]))
        let parley = try startParley(upstream: upstream)
        let id = try await parley.conversation(["model": "openai:fake"])
        let (_, reply) = try await parley.send(id, "question")
        let finished = try await parley.finished(reply)
        XCTAssertEqual(finished["usage"] as? [String: AnyHashable],
                       ["input_tokens": 0, "output_tokens": Self.maximum, "estimated": false])
        let conversation = try await parley.call("GET", "/api/conversations/\(id)")
        XCTAssertEqual(conversation.json["usage"] as? [String: AnyHashable],
                       ["input_tokens": 0, "output_tokens": Self.maximum, "replies": 1, "estimated_replies": 0])
        let report = try await parley.call("GET", "/api/usage")
        XCTAssertEqual(report.status, 200, report.text)
        let total = try XCTUnwrap(report.json["total"] as? [String: Any])
        XCTAssertEqual(total["input_tokens"] as? Int, 0)
        XCTAssertEqual(total["output_tokens"] as? Int, Self.maximum)
    }

    func testManyMaximalImportsAddUpWithoutOverflow() async throws {
        let parley = try startTeamParley()
        let admin = try Team.bearer(parley, "root", role: .admin)
        let bob = try Team.bearer(parley, "bob")
        let maximal = document(usage: ["input_tokens": Self.maximum, "output_tokens": Self.maximum], replies: 50)
        for _ in 0..<4 {
            let imported = try await parley.call("POST", "/api/import", as: bob,
                                                 json: ["parley_export": 1, "conversations": [maximal, maximal]])
            XCTAssertEqual(imported.status, 201, imported.text)
        }
        let bobID = try XCTUnwrap(try parley.app.store.user(username: "bob")).id
        let usage = try await parley.call("GET", "/api/users/\(bobID)/usage", as: admin)
        XCTAssertEqual(usage.status, 200, usage.text)
        XCTAssertEqual(usage.json["output_tokens"] as? Int, 400 * Self.maximum, usage.text)
        let own = try await parley.call("GET", "/api/usage", as: bob)
        XCTAssertEqual(own.status, 200, own.text)
        let listed = try await parley.call("GET", "/api/conversations", as: bob)
        XCTAssertEqual(listed.items.first?["usage"] as? [String: AnyHashable],
                       ["input_tokens": 50 * Self.maximum, "output_tokens": 50 * Self.maximum, "replies": 50,
                        "estimated_replies": 0])
    }

    /// Rows an older version stored unbounded (or edited by hand) are read clamped: the routes answer,
    /// never below 0, and a new reply added to a total already at Int64.max leaves it there, an integer.
    func testLegacyRowsAtInt64MaxCannotMakeTheRoutesFail() async throws {
        let upstream = try startUpstream()
        upstream.enqueue(UpstreamStreams.complete(["one"]), UpstreamStreams.complete(["two"]))
        let parley = try startTeamParley(upstream: upstream)
        let admin = try Team.bearer(parley, "root", role: .admin)
        let bob = try Team.bearer(parley, "bob")
        let bobID = try XCTUnwrap(try parley.app.store.user(username: "bob")).id
        let id = try await parley.conversation(as: bob, ["model": "openai:fake"])
        for text in ["first", "second"] {
            let sent = try await parley.send(as: bob, id, text)
            _ = try await parley.finished(try XCTUnwrap(sent.assistantID), headers: [bob])
        }
        let huge = "9223372036854775807"
        let database = try SQLiteDatabase(path: parley.directory.appendingPathComponent("parley.db").path, readOnly: false,
                                    busyTimeoutMilliseconds: 5000)
        try database.execute("""
            UPDATE messages SET usage = '{"input_tokens":\(huge),"output_tokens":\(huge)}' WHERE role = 'assistant';
            UPDATE usage_daily SET input_tokens = \(huge), output_tokens = \(huge) WHERE user_id = '\(bobID)';
            INSERT INTO usage_daily (user_id, day, model, input_tokens, output_tokens, replies, estimated_replies)
            VALUES ('\(bobID)', 1, 'old', \(huge), -1000000000, 1, 0), ('\(bobID)', 2, 'old', \(huge), \(huge), 1, 0);
            UPDATE conversation_usage SET input_tokens = -5, output_tokens = \(huge);
            """)

        let usage = try await parley.call("GET", "/api/users/\(bobID)/usage", as: admin)
        XCTAssertEqual(usage.status, 200, usage.text)
        XCTAssertEqual(usage.json["output_tokens"] as? Int, 2 * Self.maximum, "each reply read clamped: \(usage.text)")
        // (read as text: JSONSerialization reads 9223372036854775807 as a Double)
        XCTAssertTrue(usage.text.contains("\"tokens\":{\"estimated_replies\":0,\"input_tokens\":\(huge),"
                                          + "\"output_tokens\":\(huge),"), "saturated: \(usage.text)")
        let report = try await parley.call("GET", "/api/usage?from=2026-01-01&to=2026-01-31", as: bob)
        XCTAssertEqual(report.status, 200, report.text)
        let shown = try await parley.call("GET", "/api/conversations/\(id)", as: bob)
        XCTAssertEqual(shown.status, 200, shown.text)
        XCTAssertTrue(shown.text.contains("\"usage\":{\"estimated_replies\":0,\"input_tokens\":0,"
                                          + "\"output_tokens\":\(huge),\"replies\":2}"), shown.text)
        let messages = try XCTUnwrap(shown.json["messages"] as? [[String: Any]])
        XCTAssertEqual(messages.last?["usage"] as? [String: AnyHashable],
                       ["input_tokens": Self.maximum, "output_tokens": Self.maximum, "estimated": false])
        // Exported within the range, so the file imports again.
        let exported = try await parley.call("GET", "/api/conversations/\(id)/export?format=json", as: bob)
        let again = try await parley.call("POST", "/api/import", body: Array(exported.text.utf8), headers: [bob])
        XCTAssertEqual(again.status, 201, again.text)

        // A new reply onto totals already at the top: they stay there, integers.
        let sent = try await parley.send(as: bob, id, "third")
        _ = try await parley.finished(try XCTUnwrap(sent.assistantID), headers: [bob])
        let types = try database.query(
            "SELECT typeof(input_tokens), input_tokens FROM usage_daily WHERE user_id = ? AND day > 2",
            [.text(bobID)]) { row in "\(row.text(0)) \(row.int64(1))" }
        XCTAssertEqual(types, ["integer \(huge)"])
        let after = try await parley.call("GET", "/api/usage", as: bob)
        XCTAssertEqual(after.status, 200, after.text)
        XCTAssertTrue(after.text.contains("\"total\":{\"estimated_replies\":1,\"input_tokens\":\(huge),"),
                      after.text)
    }
}
