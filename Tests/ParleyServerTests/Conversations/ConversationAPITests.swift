import Foundation
import ParleyTestSupport
import XCTest

/// The conversation REST API over real HTTP, with every error status.
final class ConversationAPITests: XCTestCase {
    var parley: TestParley!

    override func setUp() async throws {
        parley = try startParley()
    }

    override func tearDown() async throws {
        // XCTest keeps test case instances for the whole run: let the server go now (the teardown
        // block registered by `startParley` stops it).
        parley = nil
    }

    func testHealthAnswersOK() async throws {
        let reply = try await parley.call("GET", "/api/health")
        XCTAssertEqual(reply.status, 200)
        XCTAssertEqual(reply.json["status"] as? String, "ok")
        XCTAssertEqual(reply.headers["x-content-type-options"], "nosniff")
        XCTAssertEqual(reply.headers["content-security-policy"],
                       "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' blob:; connect-src 'self'; "
                       + "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
        XCTAssertEqual(reply.headers["referrer-policy"], "no-referrer")
        XCTAssertEqual(reply.headers["x-frame-options"], "DENY")
        let page = try await parley.call("GET", "/")
        XCTAssertEqual(page.headers["content-security-policy"], reply.headers["content-security-policy"],
                       "the page gets the same policy")
    }

    func testModelsListTheDemoModelWhenNoProviderIsConfigured() async throws {
        let reply = try await parley.call("GET", "/api/models")
        let models = try XCTUnwrap(reply.json["models"] as? [[String: Any]])
        XCTAssertEqual(models.first?["id"] as? String, "demo")
        XCTAssertEqual(models.first?["provider"] as? String, "demo")
    }

    func testCreateShowRenameAndDeleteAConversation() async throws {
        let created = try await parley.call("POST", "/api/conversations",
                                            json: ["title": "Plans", "system_prompt": "Be brief.", "model": "demo"])
        XCTAssertEqual(created.status, 201)
        let id = try XCTUnwrap(created.json["id"] as? String)
        XCTAssertEqual(created.json["title"] as? String, "Plans")
        XCTAssertEqual(created.json["system_prompt"] as? String, "Be brief.")
        XCTAssertTrue(created.json.keys.contains("current_leaf_id"))

        let shown = try await parley.call("GET", "/api/conversations/\(id)")
        XCTAssertEqual(shown.status, 200)
        XCTAssertEqual((shown.json["messages"] as? [Any])?.count, 0)

        let renamed = try await parley.call("PATCH", "/api/conversations/\(id)",
                                            json: ["title": "Better plans", "system_prompt": NSNull()])
        XCTAssertEqual(renamed.status, 200)
        XCTAssertEqual(renamed.json["title"] as? String, "Better plans")
        XCTAssertTrue(renamed.json["system_prompt"] is NSNull)
        XCTAssertEqual(renamed.json["model"] as? String, "demo")

        let deleted = try await parley.call("DELETE", "/api/conversations/\(id)")
        XCTAssertEqual(deleted.status, 204)
        let gone = try await parley.call("GET", "/api/conversations/\(id)")
        XCTAssertEqual(gone.status, 404)
        XCTAssertEqual(gone.errorCode, "not_found")
    }

    func testDeletingAConversationDeletesItsMessages() async throws {
        let id = try await parley.conversation()
        let (user, assistant) = try await parley.send(id, "hello")
        _ = try await parley.finished(assistant)
        let status1 = try await parley.call("DELETE", "/api/conversations/\(id)").status
        XCTAssertEqual(status1, 204)
        let status2 = try await parley.call("GET", "/api/messages/\(user)").status
        XCTAssertEqual(status2, 404)
        let status3 = try await parley.call("GET", "/api/messages/\(assistant)").status
        XCTAssertEqual(status3, 404)
    }

    func testPaginationVisitsEveryConversationOnceNewestFirst() async throws {
        var created: [String] = []
        for index in 0..<23 {
            created.append(try await parley.conversation(["title": "c\(index)"]))
        }
        var seen: [String] = []
        var times: [String] = []
        var cursor: String?
        var pages = 0
        repeat {
            pages += 1
            // 23 conversations are 5 pages: a cursor that never ends fails here, not never.
            guard pages <= 10 else { return XCTFail("still a next_cursor after \(pages - 1) pages") }
            var path = "/api/conversations?limit=5"
            if let cursor { path += "&cursor=\(cursor)" }
            let page = try await parley.call("GET", path)
            XCTAssertEqual(page.status, 200, page.text)
            let items = try XCTUnwrap(page.json["items"] as? [[String: Any]])
            XCTAssertLessThanOrEqual(items.count, 5)
            seen += items.compactMap { $0["id"] as? String }
            times += items.compactMap { $0["updated_at"] as? String }
            cursor = page.json["next_cursor"] as? String
        } while cursor != nil
        // No duplicate and no gap across pages; newest updated first (ties keep a stable order).
        XCTAssertEqual(seen.count, created.count)
        XCTAssertEqual(Set(seen), Set(created))
        XCTAssertEqual(times, times.sorted(by: >))
    }

    func testPageLimitOutOfRangeAndBadCursorAre400() async throws {
        for path in ["/api/conversations?limit=0", "/api/conversations?limit=201", "/api/conversations?limit=x"] {
            let reply = try await parley.call("GET", path)
            XCTAssertEqual(reply.status, 400, path)
            XCTAssertEqual(reply.errorCode, "invalid_request")
        }
        let reply = try await parley.call("GET", "/api/conversations?cursor=not-a-cursor")
        XCTAssertEqual(reply.status, 400)
        XCTAssertEqual(reply.errorCode, "invalid_cursor")
    }

    func testUnknownRouteIs404AndWrongMethodIs405() async throws {
        let unknown = try await parley.call("GET", "/api/nothing-here")
        XCTAssertEqual(unknown.status, 404)
        XCTAssertEqual(unknown.errorCode, "not_found")
        let wrong = try await parley.call("PUT", "/api/conversations")
        XCTAssertEqual(wrong.status, 405)
        XCTAssertEqual(wrong.errorCode, "method_not_allowed")
        XCTAssertEqual(wrong.headers["allow"], "POST, GET, HEAD")
        let id = try await parley.conversation()
        let wrongOnOne = try await parley.call("POST", "/api/conversations/\(id)")
        XCTAssertEqual(wrongOnOne.status, 405)
        XCTAssertEqual(wrongOnOne.headers["allow"], "GET, PATCH, DELETE, HEAD")
        let getStop = try await parley.call("GET", "/api/messages/\(id)/stop")
        XCTAssertEqual(getStop.status, 405)
        XCTAssertEqual(getStop.headers["allow"], "POST")
        let missing = try await parley.call("GET", "/api/messages/nope")
        XCTAssertEqual(missing.status, 404)
        XCTAssertEqual(missing.errorCode, "not_found")
    }

    func testMalformedJSONAndWrongTypesAre400NamingTheField() async throws {
        let broken = try await parley.call("POST", "/api/conversations", body: Array("{\"title\":".utf8))
        XCTAssertEqual(broken.status, 400)
        XCTAssertEqual(broken.errorCode, "invalid_json")

        let notObject = try await parley.call("POST", "/api/conversations", body: Array("[1,2]".utf8))
        XCTAssertEqual(notObject.status, 400)
        XCTAssertEqual(notObject.errorCode, "invalid_json")

        let wrongType = try await parley.call("POST", "/api/conversations", json: ["title": 42])
        XCTAssertEqual(wrongType.status, 400)
        XCTAssertEqual(wrongType.errorCode, "invalid_request")
        XCTAssertTrue(wrongType.text.contains("title"), wrongType.text)

        let id = try await parley.conversation()
        let emptyContent = try await parley.call("POST", "/api/conversations/\(id)/messages", json: ["content": ""])
        XCTAssertEqual(emptyContent.status, 400)
        XCTAssertEqual(emptyContent.errorCode, "invalid_request")
        XCTAssertTrue(emptyContent.text.contains("content"))
        let badModel = try await parley.call("POST", "/api/conversations/\(id)/messages",
                                             json: ["content": "hi", "model": "nope:nothing"])
        XCTAssertEqual(badModel.status, 400)
        XCTAssertEqual(badModel.errorCode, "unknown_model")
        let badParent = try await parley.call("POST", "/api/conversations/\(id)/messages",
                                              json: ["content": "hi", "parent_id": "missing"])
        XCTAssertEqual(badParent.status, 400)
        XCTAssertEqual(badParent.errorCode, "invalid_parent")
    }

    func testFiveMebibyteBodyIs413AndTheServerKeepsServing() async throws {
        let big = [UInt8](repeating: UInt8(ascii: "a"), count: 5 << 20)
        let reply = try await parley.call("POST", "/api/conversations", body: big)
        XCTAssertEqual(reply.status, 413)
        XCTAssertEqual(reply.errorCode, "payload_too_large")
        let status4 = try await parley.call("GET", "/api/health").status
        XCTAssertEqual(status4, 200)
    }

    func testBodyLimitIsConfigurable() async throws {
        let small = try startParley(["PARLEY_MAX_BODY_BYTES": "64"])
        let reply = try await small.call("POST", "/api/conversations",
                                         json: ["title": String(repeating: "x", count: 100)])
        XCTAssertEqual(reply.status, 413)
        XCTAssertEqual(reply.errorCode, "payload_too_large")
        let fits = try await small.call("POST", "/api/conversations", json: ["title": "ok"])
        XCTAssertEqual(fits.status, 201)
    }

    func testTwoHundredConcurrentKeepAliveClientsAreAllServed() async throws {
        let url = parley.base + "/api/conversations?limit=3"
        let statuses = try await withThrowingTaskGroup(of: [Int].self) { group in
            for _ in 0..<200 {
                group.addTask {
                    try await Blocking.run {
                        let client = TestHTTPClient()
                        return try (0..<3).map { _ in try client.request(url).status }
                    }
                }
            }
            var all: [Int] = []
            for try await statuses in group { all += statuses }
            return all
        }
        XCTAssertEqual(statuses.count, 600)
        XCTAssertTrue(statuses.allSatisfy { $0 == 200 })
    }

    func testStaticPageIsServedAndTraversalRefused() async throws {
        let page = try await parley.call("GET", "/")
        XCTAssertEqual(page.status, 200)
        XCTAssertTrue(page.headers["content-type"]?.hasPrefix("text/html") ?? false)
        for path in ["/../Package.swift", "/%2e%2e/Package.swift", "/..%2fPackage.swift"] {
            let status5 = try await parley.call("GET", path).status
            XCTAssertEqual(status5, 404, path)
        }
    }

    func testDataSurvivesARestartOnTheSameDatabase() async throws {
        let id = try await parley.conversation(["title": "Keep me"])
        let (_, assistant) = try await parley.send(id, "remember this")
        let finished = try await parley.finished(assistant)
        await parley.stop()

        parley = try startParley(directory: parley.directory)
        let shown = try await parley.call("GET", "/api/conversations/\(id)")
        XCTAssertEqual(shown.json["title"] as? String, "Keep me")
        let messages = try XCTUnwrap(shown.json["messages"] as? [[String: Any]])
        XCTAssertEqual(messages.count, 2)
        XCTAssertEqual(messages[1]["content"] as? String, finished["content"] as? String)
        XCTAssertEqual(messages[1]["status"] as? String, "complete")
    }
}
