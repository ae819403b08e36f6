import Foundation
import ParleyEvents
import ParleyServer
import ParleyTestSupport
import XCTest

/// What the API accepts in titles, system prompts, models, content and `parent_id`, and that what
/// it accepts is stored exactly (issue 8, section 6). Runs against the demo model.
final class ValidationTests: XCTestCase {
    var parley: TestParley!

    override func setUp() async throws {
        parley = try TestParley()
    }

    override func tearDown() async throws {
        await parley?.stop()
        parley = nil
    }

    private func create(_ fields: [(String, String?)]) async throws -> TestParley.Reply {
        try await parley.call("POST", "/api/conversations", body: ExactJSON.object(fields))
    }

    private func patch(_ id: String, _ fields: [(String, String?)]) async throws -> TestParley.Reply {
        try await parley.call("PATCH", "/api/conversations/\(id)", body: ExactJSON.object(fields))
    }

    /// A 400 with `code` whose message names `field`.
    private func assertRefused(_ reply: TestParley.Reply, code: String = "invalid_request", naming field: String,
                               _ context: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(reply.status, 400, "\(context): \(reply.text)", file: file, line: line)
        XCTAssertEqual(reply.exact["error"]?["code"]?.string, code, "\(context): \(reply.text)", file: file, line: line)
        let message = reply.exact["error"]?["message"]?.string ?? ""
        XCTAssertTrue(message.contains("'\(field)'"), "\(context): the message names \(field): \(message)",
                      file: file, line: line)
    }

    // MARK: - U+0000

    func testNULInTitleSystemPromptOrModelIsRefusedNamingTheField() async throws {
        let id = try await parley.conversation(["title": "Before"])
        for field in ["title", "system_prompt", "model"] {
            let created = try await create([(field, "a\u{0}b")])
            assertRefused(created, naming: field, "create with U+0000 in \(field)")
            let patched = try await patch(id, [(field, "a\u{0}b")])
            assertRefused(patched, naming: field, "PATCH with U+0000 in \(field)")
        }
        let shown = try await parley.call("GET", "/api/conversations/\(id)")
        XCTAssertEqual(shown.exact["title"]?.string, "Before", "a refused PATCH changes nothing")
        XCTAssertEqual(shown.exact["system_prompt"], .null)
    }

    func testNULInMessageContentIsStoredExactly() async throws {
        let id = try await parley.conversation()
        let content = "hello\u{0}world \u{0}"
        let sent = try await parley.call("POST", "/api/conversations/\(id)/messages",
                                         body: ExactJSON.object([("content", content)]))
        XCTAssertEqual(sent.status, 201, sent.text)
        XCTAssertEqual(sent.exact["user_message"]?["content"]?.string, content)
        let userID = try XCTUnwrap(sent.exact["user_message"]?["id"]?.string)
        let assistantID = try XCTUnwrap(sent.exact["assistant_message"]?["id"]?.string)
        _ = try await parley.finished(assistantID)
        let stored = try await parley.call("GET", "/api/messages/\(userID)")
        XCTAssertEqual(stored.exact["content"]?.string, content, "content after U+0000 is kept")
        let branch = try await parley.call("GET", "/api/conversations/\(id)")
        XCTAssertEqual(branch.exact["messages"]?.array?.first?["content"]?.string, content)
    }

    // MARK: - Titles

    func testEmptyOrBlankTitleIsRefusedOnCreateAndPatchAlike() async throws {
        let id = try await parley.conversation(["title": "Kept"])
        for title in ["", " ", "\t\n ", "\u{3000}"] {
            assertRefused(try await create([("title", title)]), naming: "title", "create with title \(title.debugDescription)")
            assertRefused(try await patch(id, [("title", title)]), naming: "title", "PATCH with title \(title.debugDescription)")
        }
        assertRefused(try await patch(id, [("title", nil)]), naming: "title", "PATCH with title null")
        let shown = try await parley.call("GET", "/api/conversations/\(id)")
        XCTAssertEqual(shown.exact["title"]?.string, "Kept")

        // Omitted or null on create: the default title.
        for fields in [[], [("title", nil)]] as [[(String, String?)]] {
            let created = try await create(fields)
            XCTAssertEqual(created.status, 201, created.text)
            XCTAssertEqual(created.exact["title"]?.string, "New conversation")
        }
    }

    func testTitleAndSystemPromptLimitsHaveDocumentedDefaults() async throws {
        // 200 characters, not bytes: 200 two-byte characters fit, one more does not.
        let title = String(repeating: "é", count: 200)
        let created = try await create([("title", title), ("system_prompt", String(repeating: "p", count: 64 << 10))])
        XCTAssertEqual(created.status, 201, String(created.text.prefix(300)))
        XCTAssertEqual(created.exact["title"]?.string, title)
        let id = try XCTUnwrap(created.exact["id"]?.string)

        assertRefused(try await create([("title", title + "é")]), naming: "title", "create, 201 characters")
        assertRefused(try await patch(id, [("title", title + "é")]), naming: "title", "PATCH, 201 characters")
        let prompt = String(repeating: "p", count: (64 << 10) - 1) + "é"  // 64 KiB + 1 byte
        assertRefused(try await create([("system_prompt", prompt)]), naming: "system_prompt", "create, 64 KiB + 1")
        assertRefused(try await patch(id, [("system_prompt", prompt)]), naming: "system_prompt", "PATCH, 64 KiB + 1")
        // A huge title is refused, not stored (it used to be, and a list page came to megabytes).
        assertRefused(try await create([("title", String(repeating: "x", count: 1 << 19))]), naming: "title", "512 KiB title")
    }

    func testTitleAndSystemPromptLimitsAreSettings() async throws {
        let small = try TestParley(["PARLEY_MAX_TITLE_CHARS": "5", "PARLEY_MAX_SYSTEM_PROMPT_BYTES": "10"])
        let fits = try await small.call("POST", "/api/conversations",
                                        body: ExactJSON.object([("title", "ünïcö"), ("system_prompt", "0123456789")]))
        XCTAssertEqual(fits.status, 201, fits.text)
        let long = try await small.call("POST", "/api/conversations", body: ExactJSON.object([("title", "123456")]))
        assertRefused(long, naming: "title", "title over PARLEY_MAX_TITLE_CHARS")
        XCTAssertTrue(long.text.contains("5"), long.text)
        let prompt = try await small.call("POST", "/api/conversations",
                                          body: ExactJSON.object([("system_prompt", "012345678é")]))
        assertRefused(prompt, naming: "system_prompt", "system prompt over PARLEY_MAX_SYSTEM_PROMPT_BYTES")
        await small.stop()

        let configuration = try ParleyConfiguration(environment: [:], arguments: [])
        XCTAssertEqual(configuration.input.maxTitleCharacters, 200)
        XCTAssertEqual(configuration.input.maxSystemPromptBytes, 64 << 10)
        XCTAssertThrowsError(try ParleyConfiguration(environment: ["PARLEY_MAX_TITLE_CHARS": "0"], arguments: [])) {
            XCTAssertTrue("\($0)".contains("PARLEY_MAX_TITLE_CHARS"), "\($0)")
        }
        XCTAssertThrowsError(try ParleyConfiguration(environment: [:], arguments: ["--max-system-prompt-bytes", "x"])) {
            XCTAssertTrue("\($0)".contains("PARLEY_MAX_SYSTEM_PROMPT_BYTES"), "\($0)")
        }
    }

    // MARK: - Models

    func testAModelTheServerDoesNotOfferIsRefusedWhereverItIsSet() async throws {
        assertRefused(try await create([("model", "nope:x")]), code: "unknown_model", naming: "model", "create")
        let id = try await parley.conversation(["model": "demo"])
        assertRefused(try await patch(id, [("model", "nope:x")]), code: "unknown_model", naming: "model", "PATCH")
        assertRefused(try await patch(id, [("model", "")]), code: "unknown_model", naming: "model", "PATCH, empty")
        let shown = try await parley.call("GET", "/api/conversations/\(id)")
        XCTAssertEqual(shown.exact["model"]?.string, "demo", "a refused PATCH keeps the model")

        let send = try await parley.call("POST", "/api/conversations/\(id)/messages",
                                         body: ExactJSON.object([("content", "hi"), ("model", "nope:x")]))
        assertRefused(send, code: "unknown_model", naming: "model", "send")
        let (_, assistant) = try await parley.send(id, "hi")
        _ = try await parley.finished(assistant)
        let regenerate = try await parley.call("POST", "/api/messages/\(assistant)/regenerate",
                                               body: ExactJSON.object([("model", "nope:x")]))
        assertRefused(regenerate, code: "unknown_model", naming: "model", "regenerate")

        // Clearing the model (the server's default) and naming an offered one still work.
        let cleared = try await patch(id, [("model", nil)])
        XCTAssertEqual(cleared.status, 200, cleared.text)
        let offered = try await patch(id, [("model", "demo")])
        XCTAssertEqual(offered.status, 200, offered.text)
    }

    func testAnUnprefixedModelIsAcceptedOnceTheModelServerListsIt() async throws {
        let upstream = try FakeUpstream { request in
            request.path.hasSuffix("/models") ? .json(#"{"data":[{"id":"listed"}]}"#) : .json("{}", status: 500)
        }
        let listing = try TestParley(["PARLEY_OPENAI_BASE_URL": upstream.baseURL + "/v1"])
        // Nothing has asked for the list yet: the first check asks for it.
        let created = try await listing.call("POST", "/api/conversations", body: ExactJSON.object([("model", "listed")]))
        XCTAssertEqual(created.status, 201, created.text)
        let prefixed = try await listing.call("POST", "/api/conversations",
                                              body: ExactJSON.object([("model", "openai:listed")]))
        XCTAssertEqual(prefixed.status, 201, prefixed.text)
        let unlisted = try await listing.call("POST", "/api/conversations",
                                              body: ExactJSON.object([("model", "unlisted")]))
        assertRefused(unlisted, code: "unknown_model", naming: "model", "a name no provider lists")
        await listing.stop()
        upstream.shutdown()
    }

    // MARK: - parent_id

    func testParentMustBeAnAssistantMessageOfThisConversation() async throws {
        let id = try await parley.conversation()
        let (user, assistant) = try await parley.send(id, "first")
        _ = try await parley.finished(assistant)
        let other = try await parley.conversation()
        let (foreignUser, foreignAssistant) = try await parley.send(other, "elsewhere")
        _ = try await parley.finished(foreignAssistant)

        for (parent, what) in [(user, "a user message"), (foreignAssistant, "another conversation's answer"),
                               (foreignUser, "another conversation's question"), ("missing", "no message")] {
            let reply = try await parley.call("POST", "/api/conversations/\(id)/messages",
                                              body: ExactJSON.object([("content", "edit"), ("parent_id", parent)]))
            XCTAssertEqual(reply.status, 400, "\(what): \(reply.text)")
            XCTAssertEqual(reply.exact["error"]?["code"]?.string, "invalid_parent", what)
        }
        let branch = try await parley.call("GET", "/api/conversations/\(id)")
        XCTAssertEqual(branch.exact["messages"]?.array?.count, 2, "nothing was added: \(branch.text)")

        // An assistant message of this conversation and null (a new root) are accepted.
        let (_, under) = try await parley.send(id, "next", extra: ["parent_id": assistant])
        _ = try await parley.finished(under)
        let (_, root) = try await parley.send(id, "new first", extra: ["parent_id": NSNull()])
        _ = try await parley.finished(root)
    }
}
