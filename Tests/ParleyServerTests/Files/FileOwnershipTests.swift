import Foundation
import ParleyTestSupport
import XCTest

/// Files in team mode: another user's file id is 404 on every route, exactly like an unknown id, and
/// cannot be sent; an upload without a credential is refused before its body is read; images go only
/// to models that see them, and a model that does receives the exact image part.
final class FileOwnershipTests: XCTestCase {
    private func upload(_ parley: TestParley, _ bytes: [UInt8], filename: String,
                        as auth: (String, String)?) async throws -> TestParley.Reply {
        try await parley.upload(bytes, filename: filename, headers: auth.map { [$0] } ?? [])
    }

    func testAnotherUsersFileIsNotFoundEverywhere() async throws {
        let parley = try startTeamParley()
        let owner = try Team.bearer(parley, "owner")
        let other = try Team.bearer(parley, "other")
        let anonymous = try await upload(parley, Array("hello".utf8), filename: "a.txt", as: nil)
        XCTAssertEqual(anonymous.status, 401)

        let stored = try await upload(parley, Array("secret notes".utf8), filename: "notes.txt", as: owner)
        XCTAssertEqual(stored.status, 201, stored.text)
        let id = try XCTUnwrap(stored.json["id"] as? String)
        for (method, path) in [("GET", "/api/files/\(id)"), ("GET", "/api/files/\(id)?variant=thumb"),
                               ("DELETE", "/api/files/\(id)"), ("GET", "/api/files/does-not-exist")] {
            let reply = try await parley.call(method, path, as: other)
            XCTAssertEqual(reply.status, 404, "\(method) \(path)")
            XCTAssertEqual(reply.errorCode, "not_found")
        }
        let listed = try await parley.call("GET", "/api/files", as: other)
        XCTAssertEqual((listed.json["items"] as? [Any])?.count, 0)
        let conversation = try await parley.conversation(as: other)
        let send = try await parley.call("POST", "/api/conversations/\(conversation)/messages", as: other,
                                         json: ["content": "read this", "attachments": [id]])
        XCTAssertEqual(send.status, 404, "a foreign file cannot be sent")
        let messages = try await parley.call("GET", "/api/conversations/\(conversation)", as: other)
        XCTAssertEqual((messages.json["messages"] as? [Any])?.count, 0, "nothing was stored")
        let mine = try await parley.call("GET", "/api/files/\(id)", as: owner)
        XCTAssertEqual(mine.status, 200)
        XCTAssertEqual(mine.text, "secret notes", "the owner's file is untouched")
    }

    func testImagesGoOnlyToModelsThatSeeAndArriveAsImageParts() async throws {
        let upstream = try startUpstream()
        let blind = try startParley(upstream: upstream)
        let png = TestPNG.make(width: 20, height: 10, seed: 3)
        let image = try await upload(blind, png, filename: "p.png", as: nil)
        let imageID = try XCTUnwrap(image.json["id"] as? String)
        let conversation = try await blind.conversation(["model": "openai:fake"])
        let refused = try await blind.call("POST", "/api/conversations/\(conversation)/messages",
                                           json: ["content": "look", "attachments": [imageID]])
        XCTAssertEqual(refused.status, 400)
        XCTAssertEqual(refused.errorCode, "model_cannot_see_images")
        XCTAssertEqual(upstream.requests.count, 0, "refused before any call")
        // The demo model sees; a regenerate with a model that does not is refused the same way.
        let seen = try await blind.conversation(["model": "demo"])
        let (_, described) = try await blind.send(seen, "look", extra: ["attachments": [imageID]])
        _ = try await blind.finished(described)
        let regenerate = try await blind.call("POST", "/api/messages/\(described)/regenerate", json: ["model": "openai:fake"])
        XCTAssertEqual(regenerate.status, 400, regenerate.text)
        XCTAssertEqual(regenerate.errorCode, "model_cannot_see_images")

        let seeing = try startParley(upstream: upstream, ["PARLEY_VISION_MODELS": "openai:*"])
        let again = try await upload(seeing, png, filename: "p.png", as: nil)
        let seenID = try XCTUnwrap(again.json["id"] as? String)
        let stored = try await Blocking.run { [base = seeing.base] in
            try TestHTTPClient().request(base + "/api/files/\(seenID)", timeout: 30).body
        }
        upstream.enqueue(UpstreamStreams.complete(["A small picture."]))
        let chat = try await seeing.conversation(["model": "openai:fake"])
        let (_, assistant) = try await seeing.send(chat, "look", extra: ["attachments": [seenID]])
        _ = try await seeing.finished(assistant)
        let messages = upstream.requests.last?.jsonBody?["messages"] as? [[String: Any]] ?? []
        let content = messages.last?["content"] as? [[String: Any]] ?? []
        XCTAssertEqual(content.first?["type"] as? String, "text")
        XCTAssertEqual(content.first?["text"] as? String, "look")
        let url = (content.last?["image_url"] as? [String: Any])?["url"] as? String ?? ""
        XCTAssertEqual(url, "data:image/png;base64," + Data(stored).base64EncodedString(),
                       "the provider receives the stored (re-encoded) bytes exactly")
    }
}
