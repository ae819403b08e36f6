import Foundation
import ParleyTestSupport
import XCTest

/// Random damage to a real export, and random search queries: every answer is a success or a 400
/// naming the problem, never a 5xx; a refused import leaves nothing behind, an accepted one exports.
final class ImportFuzzTests: XCTestCase {
    /// Values put in place of a field (a function: `[Any]` is not Sendable, so it cannot be a stored static).
    private static func awkward() -> [Any] {
        [NSNull(), true, 0, -1, 1.5, Int.max, "", "x", "\u{0}", "\u{FEFF}", "2026-01-01", "2026-01-02T03:04:05.678Z",
         "streaming", "assistant", [Any](), [String: Any]()]
    }

    func testDamagedExportsAreRefusedOrImportedWhole() async throws {
        var random = SplitMix64.forTest("ImportFuzzTests.damaged")
        let parley = try startParley()
        let id = try await parley.conversation(["title": "Source", "model": "demo"])
        for content in ["one", "two", "three"] {
            let (_, reply) = try await parley.send(id, content)
            _ = try await parley.finished(reply)
        }
        let file = try await parley.call("GET", "/api/conversations/\(id)/export")
        let original = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(file.text.utf8)) as? [String: Any])
        let messageIDs = (original["messages"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
        var conversations = 1
        for round in 0..<150 {
            var document = original
            var messages = document["messages"] as? [[String: Any]] ?? []
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                let pick = Int.random(in: 0..<4, using: &random)
                if pick == 0 || messages.isEmpty {
                    let key = ["title", "model", "system_prompt", "pinned", "archived", "current_leaf_id", "created_at",
                               "updated_at", "messages", "parley_export"].randomElement(using: &random) ?? "title"
                    document[key] = Bool.random(using: &random) ? Self.value(&random, ids: messageIDs) : nil
                } else if pick == 3, messages.count > 1 {
                    messages.swapAt(0, Int.random(in: 1..<messages.count, using: &random))
                } else {
                    let index = Int.random(in: 0..<messages.count, using: &random)
                    let key = ["id", "parent_id", "role", "content", "reasoning", "status", "finish_reason", "model", "usage",
                               "error", "created_at", "updated_at"].randomElement(using: &random) ?? "id"
                    messages[index][key] = Bool.random(using: &random) ? Self.value(&random, ids: messageIDs) : nil
                }
            }
            if document["messages"] is [[String: Any]] { document["messages"] = messages }
            guard JSONSerialization.isValidJSONObject(document) else { continue }
            let body = Array(try JSONSerialization.data(withJSONObject: document))
            let reply = try await parley.call("POST", "/api/import", body: body)
            XCTAssertTrue([201, 400].contains(reply.status), "round \(round): \(reply.status) \(reply.text)")
            if reply.status == 400 {
                XCTAssertEqual(reply.errorCode, "invalid_import", reply.text)
                XCTAssertFalse(reply.errorMessage.isEmpty)
            } else if let newID = reply.exact["items"]?.array?.first?["id"]?.string {
                conversations += 1
                let again = try await parley.call("GET", "/api/conversations/\(newID)/export")
                XCTAssertEqual(again.status, 200, again.text)
                let shown = try await parley.call("GET", "/api/conversations/\(newID)")
                XCTAssertEqual(shown.status, 200, shown.text)
            }
        }
        let all = try await parley.call("GET", "/api/export")
        XCTAssertEqual(all.exact["conversations"]?.array?.count, conversations, "refused files left nothing behind")
    }

    func testRandomSearchQueriesAreAnsweredOrRefusedWith400() async throws {
        var random = SplitMix64.forTest("ImportFuzzTests.search")
        let parley = try startParley()
        let id = try await parley.conversation(["title": "Fuzz target"])
        _ = try await parley.send(id, "some words to find: alpha beta gamma 東京タワー café")
        let pieces = ["alpha", "beta", "東京", "tower", "\"", "*", "(", ")", "AND", "OR", "NOT", "NEAR(", ",", ":", "^",
                      "+", "-", "body:", "x:", "\u{0}", "\u{FEFF}", "é", "  ", "{", "}", "[", "]", "'", "\\", "%", "_", "\u{E000}"]
        for _ in 0..<200 {
            let query = (0..<Int.random(in: 1...6, using: &random)).map { _ in
                pieces.randomElement(using: &random) ?? ""
            }.joined(separator: Bool.random(using: &random) ? " " : "")
            let encoded = query.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
            let reply = try await parley.call("GET", "/api/conversations?q=\(encoded)")
            XCTAssertTrue([200, 400].contains(reply.status), "\(query.debugDescription): \(reply.status) \(reply.text)")
            if reply.status == 200 {
                for item in reply.exact["items"]?.array ?? [] {
                    let snippet = item["snippet"]?.string ?? ""
                    XCTAssertEqual(snippet.components(separatedBy: "<mark>").count, snippet.components(separatedBy: "</mark>").count)
                    XCTAssertFalse(snippet.replacingOccurrences(of: "<mark>", with: "").replacingOccurrences(of: "</mark>", with: "")
                        .contains("<"), snippet)
                }
            } else {
                XCTAssertEqual(reply.errorCode, "invalid_query", reply.text)
            }
        }
    }

    private static func value(_ random: inout SplitMix64, ids: [String]) -> Any {
        if Bool.random(using: &random), let id = ids.randomElement(using: &random) { return id }
        return awkward().randomElement(using: &random) ?? NSNull()
    }
}
