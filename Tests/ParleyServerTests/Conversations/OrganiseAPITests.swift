import Foundation
import ParleyTestSupport
import XCTest

/// Pin, archive and fork over real HTTP, in local and team mode, with foreign ids and bad input.
final class OrganiseAPITests: XCTestCase {
    func testPinAndArchiveFilterTheListAndArchivedOnesAreHiddenByDefault() async throws {
        let parley = try startParley()
        let plain = try await parley.conversation(["title": "plain"])
        let pinned = try await parley.conversation(["title": "pinned"])
        let archived = try await parley.conversation(["title": "archived"])
        let before = try await parley.call("GET", "/api/conversations/\(pinned)")
        let pin = try await parley.call("PATCH", "/api/conversations/\(pinned)", json: ["pinned": true])
        XCTAssertEqual(pin.status, 200, pin.text)
        XCTAssertEqual(pin.json["pinned"] as? Bool, true)
        XCTAssertEqual(pin.json["archived"] as? Bool, false)
        XCTAssertEqual(pin.json["updated_at"] as? String, before.json["updated_at"] as? String,
                       "pinning is not activity: the list order stays")
        let archive = try await parley.call("PATCH", "/api/conversations/\(archived)", json: ["archived": true])
        XCTAssertEqual(archive.json["archived"] as? Bool, true)

        func ids(_ query: String) async throws -> [String] {
            let reply = try await parley.call("GET", "/api/conversations\(query)")
            XCTAssertEqual(reply.status, 200, reply.text)
            return reply.items.compactMap { $0["id"] as? String }
        }
        let all = try await ids("")
        XCTAssertEqual(all, [pinned, plain], "archived ones are hidden by default")
        let onlyPinned = try await ids("?pinned=true")
        XCTAssertEqual(onlyPinned, [pinned])
        let unpinned = try await ids("?pinned=false")
        XCTAssertEqual(unpinned, [plain])
        let onlyArchived = try await ids("?archived=true")
        XCTAssertEqual(onlyArchived, [archived])
        let unarchive = try await parley.call("PATCH", "/api/conversations/\(archived)", json: ["archived": false])
        XCTAssertEqual(unarchive.json["archived"] as? Bool, false)
        let back = try await ids("")
        XCTAssertEqual(Set(back), [plain, pinned, archived])

        for bad in ["?pinned=yes", "?archived=1", "?archived="] {
            let reply = try await parley.call("GET", "/api/conversations\(bad)")
            XCTAssertEqual(reply.status, 400, bad)
            XCTAssertEqual(reply.errorCode, "invalid_request")
        }
        let wrongType = try await parley.call("PATCH", "/api/conversations/\(plain)", json: ["pinned": "true"])
        XCTAssertEqual(wrongType.status, 400)
        XCTAssertTrue(wrongType.errorMessage.contains("pinned"), wrongType.text)
        let missing = try await parley.call("PATCH", "/api/conversations/nope", json: ["archived": true])
        XCTAssertEqual(missing.status, 404)
    }

    func testForkCopiesTheBranchUpToTheMessage() async throws {
        let parley = try startParley()
        let id = try await parley.conversation(["title": "Source", "system_prompt": "Be brief.", "model": "demo",
                                                "temperature": 0.25])
        let (firstUser, firstReply) = try await parley.send(id, "first question")
        _ = try await parley.finished(firstReply)
        let (_, secondReply) = try await parley.send(id, "second question")
        _ = try await parley.finished(secondReply)

        let fork = try await parley.call("POST", "/api/conversations/\(id)/fork", json: ["message_id": firstReply])
        XCTAssertEqual(fork.status, 201, fork.text)
        let forkID = try XCTUnwrap(fork.json["id"] as? String)
        XCTAssertNotEqual(forkID, id)
        XCTAssertEqual(fork.json["title"] as? String, "Source")
        XCTAssertEqual(fork.json["system_prompt"] as? String, "Be brief.")
        XCTAssertEqual(fork.json["model"] as? String, "demo")
        XCTAssertEqual(fork.json["temperature"] as? Double, 0.25, "generation settings are copied")
        let messages = try XCTUnwrap(fork.json["messages"] as? [[String: Any]])
        XCTAssertEqual(messages.map { $0["role"] as? String }, ["user", "assistant"])
        XCTAssertEqual(messages[0]["content"] as? String, "first question")
        let original = try await parley.message(firstReply)
        XCTAssertEqual(messages[1]["content"] as? String, original["content"] as? String)
        XCTAssertEqual(messages[1]["status"] as? String, "complete")
        XCTAssertFalse([firstUser, firstReply].contains(messages[0]["id"] as? String ?? ""), "copies have new ids")
        XCTAssertEqual(fork.json["current_leaf_id"] as? String, messages[1]["id"] as? String)
        // The fork continues on its own; the source keeps its two turns.
        let (_, forkReply) = try await parley.send(forkID, "a different second question")
        _ = try await parley.finished(forkReply)
        let source = try await parley.call("GET", "/api/conversations/\(id)")
        XCTAssertEqual((source.json["messages"] as? [Any])?.count, 4)

        let named = try await parley.call("POST", "/api/conversations/\(id)/fork",
                                          json: ["message_id": firstUser, "title": "Just the question"])
        XCTAssertEqual(named.status, 201, named.text)
        XCTAssertEqual(named.json["title"] as? String, "Just the question")
        XCTAssertEqual((named.json["messages"] as? [Any])?.count, 1)
    }

    func testForkRefusesBadInputAndStreamingBranches() async throws {
        let upstream = try startUpstream()
        let parley = try startParley(upstream: upstream)
        let id = try await parley.conversation(["model": "openai:fake"])
        let other = try await parley.conversation()
        let gate = FakeUpstream.Gate()
        upstream.enqueue(UpstreamStreams.gated(UpstreamStreams.complete(["partial"]), start: gate))
        let (_, streaming) = try await parley.send(id, "hello")
        let busy = try await parley.call("POST", "/api/conversations/\(id)/fork", json: ["message_id": streaming])
        XCTAssertEqual(busy.status, 409, busy.text)
        gate.open()
        _ = try await parley.finished(streaming)

        let cases: [(String, [String: Any], Int)] = [
            ("/api/conversations/\(id)/fork", [:], 400),
            ("/api/conversations/\(id)/fork", ["message_id": 5], 400),
            ("/api/conversations/\(id)/fork", ["message_id": "nope"], 404),
            ("/api/conversations/\(other)/fork", ["message_id": streaming], 404),
            ("/api/conversations/nope/fork", ["message_id": streaming], 404),
            ("/api/conversations/\(id)/fork", ["message_id": streaming, "title": " "], 400),
        ]
        for (path, body, status) in cases {
            let reply = try await parley.call("POST", path, json: body)
            XCTAssertEqual(reply.status, status, "\(path) \(body): \(reply.text)")
        }
    }

    func testTeamMembersCannotPinArchiveOrForkAnotherUsersConversation() async throws {
        let parley = try startTeamParley()
        let alice = try Team.bearer(parley, "alice")
        let bob = try Team.bearer(parley, "bob")
        let id = try await parley.conversation(as: alice, ["title": "Alice's"])
        let sent = try await parley.send(as: alice, id, "hello")
        let assistant = try XCTUnwrap(sent.assistantID)
        _ = try await parley.finished(assistant, headers: [alice])
        for body in [["pinned": true], ["archived": true]] as [[String: Any]] {
            let reply = try await parley.call("PATCH", "/api/conversations/\(id)", as: bob, json: body)
            XCTAssertEqual(reply.status, 404, reply.text)
        }
        let fork = try await parley.call("POST", "/api/conversations/\(id)/fork", as: bob, json: ["message_id": assistant])
        XCTAssertEqual(fork.status, 404)
        // Bob's own conversation with Alice's message id: still not found.
        let bobs = try await parley.conversation(as: bob)
        let crossed = try await parley.call("POST", "/api/conversations/\(bobs)/fork", as: bob, json: ["message_id": assistant])
        XCTAssertEqual(crossed.status, 404)
        let shown = try await parley.call("GET", "/api/conversations/\(id)", as: alice)
        XCTAssertEqual(shown.json["pinned"] as? Bool, false)
        XCTAssertEqual(shown.json["archived"] as? Bool, false)
        let bobsList = try await parley.call("GET", "/api/conversations?archived=true", as: bob)
        XCTAssertEqual(bobsList.items.count, 0)
        let own = try await parley.call("POST", "/api/conversations/\(id)/fork", as: alice, json: ["message_id": assistant])
        XCTAssertEqual(own.status, 201)
        for (method, path, body) in [("POST", "/api/conversations/\(id)/fork", ["message_id": assistant]),
                                     ("PATCH", "/api/conversations/\(id)", ["pinned": true])] as [(String, String, [String: Any])] {
            let anonymous = try await parley.call(method, path, json: body)
            XCTAssertEqual(anonymous.status, 401, "\(method) \(path)")
        }
    }
}
