import Foundation
@testable import ParleyServer
import ParleyTestSupport
@testable import ParleyTransfer
import XCTest

/// Export (one conversation as JSON or Markdown, everything streamed) and import over real HTTP:
/// round trips, hostile files refused whole, and every user seeing only their own.
final class ExportImportAPITests: XCTestCase {
    /// A conversation with two turns, a regenerated (second) reply and a pinned flag; returns its id.
    private func richConversation(_ parley: TestParley, title: String = "Round trip",
                                  as auth: (String, String)? = nil) async throws -> String {
        let headers = auth.map { [$0] } ?? []
        let created = try await parley.call("POST", "/api/conversations", json: ["title": title, "model": "demo",
                                                                                  "system_prompt": "Be exact.",
                                                                                  "temperature": 0.5, "max_tokens": 300],
                                            headers: headers)
        let id = try XCTUnwrap(created.json["id"] as? String)
        for content in ["first question with **bold**", "second question \u{FEFF}日本語 👍🏽"] {
            let sent = try await parley.call("POST", "/api/conversations/\(id)/messages", json: ["content": content],
                                             headers: headers)
            _ = try await parley.finished(try XCTUnwrap(sent.assistantID), headers: headers)
        }
        let shown = try await parley.call("GET", "/api/conversations/\(id)", headers: headers)
        let last = try XCTUnwrap((shown.json["messages"] as? [[String: Any]])?.last?["id"] as? String)
        let again = try await parley.call("POST", "/api/messages/\(last)/regenerate", json: [:], headers: headers)
        _ = try await parley.finished(try XCTUnwrap(again.json["id"] as? String), headers: headers)
        _ = try await parley.call("PATCH", "/api/conversations/\(id)", json: ["pinned": true], headers: headers)
        return id
    }

    /// The document with every id replaced by its message's place in the list (the conversation's
    /// id dropped): what must survive a round trip.
    private func normalized(_ conversation: ExactJSON) -> ExactJSON {
        guard case .object(var fields) = conversation, let messages = fields["messages"]?.array else { return conversation }
        var place: [String: Double] = [:]
        for (index, message) in messages.enumerated() {
            if let id = message["id"]?.string { place[id] = Double(index) }
        }
        func mapped(_ value: ExactJSON?) -> ExactJSON {
            value?.string.flatMap { place[$0] }.map(ExactJSON.number) ?? .null
        }
        fields["id"] = nil
        fields["current_leaf_id"] = mapped(fields["current_leaf_id"])
        fields["messages"] = .array(messages.map { message in
            guard case .object(var item) = message else { return message }
            item["id"] = mapped(item["id"])
            item["parent_id"] = mapped(item["parent_id"])
            return .object(item)
        })
        return .object(fields)
    }

    /// JSON text with sorted keys, so equal values give equal text.
    private func text(_ value: ExactJSON) -> String {
        switch value {
        case .object(let fields):
            "{" + fields.keys.sorted().map { "\(ExactJSON.literal($0)):\(text(fields[$0] ?? .null))" }
                .joined(separator: ",") + "}"
        case .array(let items): "[" + items.map(text).joined(separator: ",") + "]"
        case .string(let string): ExactJSON.literal(string)
        case .number(let number): "\(number)"
        case .bool(let flag): "\(flag)"
        case .null: "null"
        }
    }

    private func count(_ parley: TestParley, as auth: (String, String)? = nil) async throws -> Int {
        let headers = auth.map { [$0] } ?? []
        let active = try await parley.call("GET", "/api/conversations?limit=200", headers: headers)
        let archived = try await parley.call("GET", "/api/conversations?limit=200&archived=true", headers: headers)
        return active.items.count + archived.items.count
    }

    // MARK: - Round trips

    func testOneConversationRoundTripsWholeTree() async throws {
        let parley = try startParley()
        let id = try await richConversation(parley)
        let exported = try await parley.call("GET", "/api/conversations/\(id)/export?format=json")
        XCTAssertEqual(exported.status, 200, exported.text)
        XCTAssertEqual(exported.headers["content-type"], "application/json; charset=utf-8")
        XCTAssertEqual(exported.headers["content-disposition"], "attachment; filename=\"parley-Round-trip.json\"")
        let document = exported.exact
        XCTAssertEqual(document["parley_export"], .number(1))
        let messages = try XCTUnwrap(document["messages"]?.array)
        XCTAssertEqual(messages.count, 5, "both replies of the regenerated turn")
        XCTAssertEqual(messages.filter { $0["status"]?.string == "complete" }.count, 5)
        XCTAssertNotNil(messages.last?["usage"]?["output_tokens"], "\(messages.last ?? .null)")
        XCTAssertEqual(messages[2]["content"]?.string, "second question \u{FEFF}日本語 👍🏽")
        XCTAssertEqual(document["pinned"], .bool(true))
        XCTAssertEqual(document["temperature"], .number(0.5))
        XCTAssertEqual(document["max_tokens"], .number(300))

        let imported = try await parley.call("POST", "/api/import", body: Array(exported.text.utf8))
        XCTAssertEqual(imported.status, 201, imported.text)
        let newID = try XCTUnwrap(imported.exact["items"]?.array?.first?["id"]?.string)
        XCTAssertNotEqual(newID, id)
        XCTAssertEqual(imported.exact["items"]?.array?.first?["imported"], .bool(true), "an import is marked")
        let original = try await parley.call("GET", "/api/conversations/\(id)")
        XCTAssertEqual(original.exact["imported"], .bool(false))
        let listed = try await parley.call("GET", "/api/conversations?limit=200&pinned=true")
        XCTAssertEqual(listed.exact["items"]?.array?.first { $0["id"]?.string == newID }?["imported"], .bool(true))
        let again = try await parley.call("GET", "/api/conversations/\(newID)/export")
        XCTAssertEqual(again.status, 200)
        XCTAssertEqual(normalized(again.exact), normalized(document))
        XCTAssertTrue(Set(again.exact["messages"]?.array?.compactMap { $0["id"]?.string } ?? [])
            .isDisjoint(with: messages.compactMap { $0["id"]?.string }), "every id is new")
        // The imported conversation shows and continues like any other, with the token totals its replies carry.
        let shown = try await parley.call("GET", "/api/conversations/\(newID)")
        let source = try await parley.call("GET", "/api/conversations/\(id)")
        XCTAssertEqual(shown.exact["usage"], source.exact["usage"])
        XCTAssertNotEqual(shown.exact["usage"]?["output_tokens"], .number(0))
        let branch = try XCTUnwrap(shown.json["messages"] as? [[String: Any]])
        XCTAssertEqual(branch.count, 4)
        XCTAssertNil(branch[0]["html"], "a user message is shown as typed: no HTML")
        XCTAssertEqual(branch[1]["html"] as? String != nil, true, "a reply keeps its HTML")
        XCTAssertEqual((branch[3]["siblings"] as? [String: Any])?["count"] as? Int, 2)
        let (_, reply) = try await parley.send(newID, "third")
        let finished = try await parley.finished(reply)
        XCTAssertEqual(finished["status"] as? String, "complete")
        let found = try await parley.call("GET", "/api/conversations?q=%E6%97%A5%E6%9C%AC%E8%AA%9E&archived=false")
        XCTAssertEqual(Set(found.items.compactMap { $0["id"] as? String }), [id, newID], "imports are searchable")
    }

    func testEverythingExportsAsOneStreamedDocumentAndRoundTrips() async throws {
        let parley = try startParley()
        let first = try await richConversation(parley, title: "One")
        let second = try await parley.conversation(["title": "Empty one"])
        _ = try await parley.call("PATCH", "/api/conversations/\(second)", json: ["archived": true])
        // Enough conversations for several store pages.
        for index in 0..<(ExportHandlers.exportBatch * 2 + 3) {
            _ = try parley.app.store.createConversation(title: "bulk \(index)")
        }
        let total = ExportHandlers.exportBatch * 2 + 5
        let exported = try await parley.call("GET", "/api/export")
        XCTAssertEqual(exported.status, 200)
        XCTAssertEqual(exported.headers["transfer-encoding"], "chunked", "streamed, not sent with a length")
        XCTAssertNil(exported.headers["content-length"])
        let conversations = try XCTUnwrap(exported.exact["conversations"]?.array, exported.text.prefix(300).description)
        XCTAssertEqual(conversations.count, total)
        XCTAssertEqual(exported.exact["parley_export"], .number(1))
        XCTAssertEqual(Set(conversations.compactMap { $0["id"]?.string }).count, total)
        XCTAssertTrue(conversations.contains { $0["id"]?.string == first })
        XCTAssertTrue(conversations.contains { $0["id"]?.string == second && $0["archived"] == .bool(true) })

        let imported = try await parley.call("POST", "/api/import", body: Array(exported.text.utf8))
        XCTAssertEqual(imported.status, 201, imported.text)
        XCTAssertEqual(imported.exact["items"]?.array?.count, total)
        let again = try await parley.call("GET", "/api/export")
        let all = try XCTUnwrap(again.exact["conversations"]?.array)
        XCTAssertEqual(all.count, total * 2)
        func canonical(_ items: [ExactJSON]) -> [String] {
            items.map { text(normalized($0)) }.sorted()
        }
        XCTAssertTrue(canonical(all) == canonical(conversations + conversations),
                      "the second export holds every conversation twice, equal apart from ids")
    }

    func testExportFileNamesComeFromTheTitleSanitised() async throws {
        let parley = try startParley()
        let cases: [(title: String, disposition: (String) -> String)] = [
            ("How do I reverse a list?", { _ in "attachment; filename=\"parley-How-do-I-reverse-a-list.md\"" }),
            ("../../etc/passwd \"quoted\"\\", { _ in "attachment; filename=\"parley-etc-passwd-quoted.md\"" }),
            ("Café au lait", { _ in "attachment; filename=\"parley-Caf-au-lait.md\"; "
                + "filename*=UTF-8''parley-Caf%C3%A9-au-lait.md" }),
            ("日本語", { id in "attachment; filename=\"parley-\(id).md\"; "
                + "filename*=UTF-8''parley-%E6%97%A5%E6%9C%AC%E8%AA%9E.md" }),
            ("???", { id in "attachment; filename=\"parley-\(id).md\"" }),
        ]
        for item in cases {
            let id = try await parley.conversation(["title": item.title])
            let reply = try await parley.call("GET", "/api/conversations/\(id)/export?format=md")
            XCTAssertEqual(reply.headers["content-disposition"], item.disposition(id), item.title)
        }
        let long = try await parley.conversation(["title": String(repeating: "a", count: 150)])
        let json = try await parley.call("GET", "/api/conversations/\(long)/export")
        XCTAssertEqual(json.headers["content-disposition"],
                       "attachment; filename=\"parley-\(String(repeating: "a", count: 80)).json\"")
    }

    func testAForkOfAnImportIsNotMarkedImported() async throws {
        let parley = try startParley()
        let id = try await richConversation(parley)
        let exported = try await parley.call("GET", "/api/conversations/\(id)/export")
        let imported = try await parley.call("POST", "/api/import", body: Array(exported.text.utf8))
        let item = try XCTUnwrap(imported.exact["items"]?.array?.first)
        let newID = try XCTUnwrap(item["id"]?.string), leaf = try XCTUnwrap(item["current_leaf_id"]?.string)
        let fork = try await parley.call("POST", "/api/conversations/\(newID)/fork", json: ["message_id": leaf])
        XCTAssertEqual(fork.status, 201, fork.text)
        XCTAssertEqual(fork.exact["imported"], .bool(false))
    }

    func testTheCurrentBranchExportsAsMarkdown() async throws {
        let parley = try startParley()
        let id = try await richConversation(parley, title: "Notes")
        let reply = try await parley.call("GET", "/api/conversations/\(id)/export?format=md")
        XCTAssertEqual(reply.status, 200, reply.text)
        XCTAssertEqual(reply.headers["content-type"], "text/markdown; charset=utf-8")
        XCTAssertEqual(reply.headers["content-disposition"], "attachment; filename=\"parley-Notes.md\"")
        XCTAssertTrue(reply.text.hasPrefix("# Notes\n\n> _System prompt_\n>\n> Be exact.\n"), reply.text)
        XCTAssertTrue(reply.text.contains("## User\n\nfirst question with **bold**\n"), reply.text)
        XCTAssertTrue(reply.text.contains("## Assistant (demo)\n\n"), reply.text)
        XCTAssertEqual(reply.text.components(separatedBy: "## Assistant").count - 1, 2, "the current branch only")
        let bad = try await parley.call("GET", "/api/conversations/\(id)/export?format=xml")
        XCTAssertEqual(bad.status, 400)
        let missing = try await parley.call("GET", "/api/conversations/nope/export?format=md")
        XCTAssertEqual(missing.status, 404)
    }

    // MARK: - Hostile files

    /// A valid one-conversation document whose messages are `messages` (each a dictionary).
    private func document(_ messages: [[String: Any]], extra: [String: Any] = [:]) -> [String: Any] {
        ["parley_export": 1, "title": "Imported", "model": NSNull(), "system_prompt": NSNull(), "pinned": false,
         "archived": false, "current_leaf_id": NSNull(), "created_at": "2026-01-02T03:04:05.678Z",
         "updated_at": "2026-01-02T03:04:05.678Z", "messages": messages].merging(extra) { $1 }
    }

    private func message(_ id: String, parent: String?, role: String = "user", status: String = "complete",
                         extra: [String: Any] = [:]) -> [String: Any] {
        ["id": id, "parent_id": parent ?? NSNull(), "role": role, "content": "text of \(id)", "reasoning": "",
         "status": status, "finish_reason": NSNull(), "model": NSNull(), "usage": NSNull(), "error": NSNull(),
         "created_at": "2026-01-02T03:04:05.678Z", "updated_at": "2026-01-02T03:04:05.678Z"].merging(extra) { $1 }
    }

    func testHostileFilesAreRefusedWholeAndNameTheProblem() async throws {
        // Import has its own body limit (it embeds attachments): PARLEY_MAX_IMPORT_BYTES, not the API's.
        let parley = try startParley(["PARLEY_MAX_IMPORT_BYTES": "65536"])
        let good = document([message("a", parent: nil), message("b", parent: "a", role: "assistant")])
        let sound = try await parley.call("POST", "/api/import", json: good)
        XCTAssertEqual(sound.status, 201, sound.text)
        let withCall = try await parley.call("POST", "/api/import", json: document([
            message("a", parent: nil), message("b", parent: "a", role: "assistant", extra: ["parts": [toolCall([:])]])]))
        XCTAssertEqual(withCall.status, 201, withCall.text)
        let before = try await count(parley)

        let cases: [(name: String, body: [UInt8], expect: String)] = [
            ("cycle", try json(document([message("a", parent: "b"), message("b", parent: "a")])), "cycle"),
            ("cycle beside a root", try json(document([message("r", parent: nil), message("a", parent: "c"),
                                                       message("b", parent: "a"), message("c", parent: "b")])), "cycle"),
            ("self parent", try json(document([message("a", parent: "a")])), "cycle"),
            ("dangling", try json(document([message("a", parent: nil), message("b", parent: "zzz")])), "'zzz'"),
            ("duplicate", try json(document([message("a", parent: nil), message("a", parent: nil)])), "two messages have the id 'a'"),
            ("streaming", try json(document([message("a", parent: nil, status: "streaming")])), "messages[0].status"),
            ("unknown status", try json(document([message("a", parent: nil, status: "done")])), "messages[0].status"),
            ("wrong role", try json(document([message("a", parent: nil, role: "robot")])), "messages[0].role"),
            ("content number", try json(document([message("a", parent: nil, extra: ["content": 5])])),
             "messages[0].content: must be a string"),
            ("usage text", try json(document([message("a", parent: nil, extra: ["usage": ["output_tokens": "many"]])])),
             "messages[0].usage.output_tokens: must be an integer"),
            ("temperature high", try json(document([]).merging(["temperature": 3]) { $1 }), "temperature"),
            ("max_tokens text", try json(document([]).merging(["max_tokens": "lots"]) { $1 }), "max_tokens: must be an integer"),
            ("missing id", try json(document([message("a", parent: nil, extra: ["id": NSNull()])])), "messages[0].id"),
            ("messages object", try json(document([]).merging(["messages": ["a": 1]]) { $1 }), "messages: must be an array"),
            ("title null", try json(document([]).merging(["title": NSNull()]) { $1 }), "title"),
            ("title blank", try json(document([]).merging(["title": "  "]) { $1 }), "title"),
            ("bad time", try json(document([message("a", parent: nil, extra: ["created_at": "yesterday"])])),
             "messages[0].created_at"),
            ("future time", try json(document([message("a", parent: nil, extra: ["updated_at": "2999-01-01T00:00:00.000Z"])])),
             "in the future"),
            ("leaf elsewhere", try json(document([message("a", parent: nil)], extra: ["current_leaf_id": "q"])),
             "current_leaf_id"),
            ("call arguments a number", try json(document([message("a", parent: nil), message("b", parent: "a", role: "assistant",
                extra: ["parts": [toolCall(["arguments": 5])]])])), "messages[1].parts[0].arguments"),
            ("call result item a number", try json(document([message("a", parent: nil), message("b", parent: "a", role: "assistant",
                extra: ["parts": [toolCall(["result": ["content": [5], "is_error": false]])]])])),
             "messages[1].parts[0].result.content[0]"),
            ("call structured result an array", try json(document([message("a", parent: nil), message("b", parent: "a", role: "assistant",
                extra: ["parts": [toolCall(["result": ["content": [], "structured_content": [1], "is_error": false]])]])])),
             "messages[1].parts[0].result.structured_content"),
            ("no version", try json(document([]).merging(["parley_export": NSNull()]) { $1 }), "parley_export"),
            ("version 2", try json(document([]).merging(["parley_export": 2]) { $1 }), "parley_export"),
            ("second of two bad", try json(["parley_export": 1, "conversations": [
                document([message("a", parent: nil)]), document([message("x", parent: "y")])]]),
             "conversations[1]"),
            ("deep", Array(String(repeating: "[", count: 40_000).utf8), "deeper than"),
            ("deep in a string-looking place", Array(("{\"parley_export\":1,\"title\":\"x\\\"" + String(repeating: "{", count: 20)
                + "\",\"messages\":" + String(repeating: "[", count: 100)).utf8), "deeper than"),
            ("not json", Array("{\"parley_export\": 1,".utf8), "not valid JSON"),
            ("array", Array("[]".utf8), "isn't a Parley export"),
            ("another program's JSON", try json(["name": "settings", "items": [1, 2]]), "isn't a Parley export"),
            ("empty", [], "empty"),
        ]
        for item in cases {
            let reply = try await parley.call("POST", "/api/import", body: item.body)
            XCTAssertEqual(reply.status, 400, "\(item.name): \(reply.text)")
            XCTAssertEqual(reply.errorCode, "invalid_import", item.name)
            XCTAssertTrue(reply.errorMessage.contains(item.expect), "\(item.name): \(reply.errorMessage)")
        }
        let huge = try await parley.call("POST", "/api/import",
                                         body: try json(document([message("a", parent: nil,
                                                                          extra: ["content": String(repeating: "x", count: 70_000)])])))
        XCTAssertEqual(huge.status, 413, "over PARLEY_MAX_IMPORT_BYTES")
        let after = try await count(parley)
        XCTAssertEqual(after, before, "nothing of a refused file is imported")
        let text = try await parley.call("POST", "/api/import", body: try json(good),
                                         headers: [("Content-Type", "text/plain")])
        XCTAssertNotEqual(text.status, 201)
    }

    /// A finished tool call part as an export writes it, with `changes` applied.
    private func toolCall(_ changes: [String: Any]) -> [String: Any] {
        ["type": "tool_call", "id": "c1", "provider_id": "call_1", "tool": "parley/search_history",
         "name": "parley__search_history", "arguments_text": "{}", "arguments": [String: Any](), "status": "complete",
         "decision": NSNull(), "result": ["content": [["type": "text", "text": "none"]], "is_error": false],
         "round": 0].merging(changes) { $1 }
    }

    /// A JSON body (through TestParley.call's `body`, so the test controls every byte).
    private func json(_ object: Any) throws -> [UInt8] {
        Array(try JSONSerialization.data(withJSONObject: object))
    }

    func testAMissingLeafBecomesTheNewestMessageWithoutReplies() async throws {
        let parley = try startParley()
        let late = message("c", parent: "a", role: "assistant", extra: ["created_at": "2026-01-02T03:04:07.000Z"])
        let reply = try await parley.call("POST", "/api/import", json: document([
            message("a", parent: nil), message("b", parent: "a", role: "assistant"), late]))
        XCTAssertEqual(reply.status, 201, reply.text)
        let id = try XCTUnwrap(reply.exact["items"]?.array?.first?["id"]?.string)
        let shown = try await parley.call("GET", "/api/conversations/\(id)")
        let branch = try XCTUnwrap(shown.json["messages"] as? [[String: Any]])
        XCTAssertEqual(branch.map { $0["content"] as? String }, ["text of a", "text of c"])
    }

    // MARK: - Team mode

    func testTeamMembersExportAndImportOnlyTheirOwn() async throws {
        let parley = try startTeamParley()
        let alice = try Team.bearer(parley, "alice")
        let bob = try Team.bearer(parley, "bob")
        let hers = try await richConversation(parley, title: "Alice's", as: alice)
        let his = try await parley.conversation(as: bob, ["title": "Bob's"])

        for format in ["json", "md"] {
            let foreign = try await parley.call("GET", "/api/conversations/\(hers)/export?format=\(format)", as: bob)
            XCTAssertEqual(foreign.status, 404, foreign.text)
        }
        let bobsAll = try await parley.call("GET", "/api/export", as: bob)
        XCTAssertEqual(bobsAll.exact["conversations"]?.array?.compactMap { $0["id"]?.string }, [his])
        let anonymous = try await parley.call("GET", "/api/export")
        XCTAssertEqual(anonymous.status, 401)
        let anonymousImport = try await parley.call("POST", "/api/import", json: ["parley_export": 1])
        XCTAssertEqual(anonymousImport.status, 401)

        // Bob imports Alice's export (she gave it to him): the copy is his, hers stays hers.
        let file = try await parley.call("GET", "/api/conversations/\(hers)/export", as: alice)
        let imported = try await parley.call("POST", "/api/import", body: Array(file.text.utf8), headers: [bob])
        XCTAssertEqual(imported.status, 201, imported.text)
        let copy = try XCTUnwrap(imported.exact["items"]?.array?.first?["id"]?.string)
        let bobSees = try await parley.call("GET", "/api/conversations/\(copy)", as: bob)
        XCTAssertEqual(bobSees.status, 200)
        let aliceSees = try await parley.call("GET", "/api/conversations/\(copy)", as: alice)
        XCTAssertEqual(aliceSees.status, 404)
        let aliceCount = try await count(parley, as: alice)
        XCTAssertEqual(aliceCount, 1)
        let bad = try await parley.call("POST", "/api/import", body: Array("{\"parley_export\":1}".utf8), headers: [bob])
        XCTAssertEqual(bad.status, 400)
    }
}

