@testable import ParleyAPI
import ParleyHTTP
@testable import ParleyServer
import ParleyStore
import XCTest

/// `OpenStreams` alone: the counts per user and kind, a ticket released exactly once (also when the
/// HTTP layer never starts its body and only drops it), and credentials ended before a stream starts.
final class OpenStreamsTests: XCTestCase {
    private func caller(_ id: String, _ credential: Caller.Credential) -> Caller {
        Caller(user: User(id: id, username: id, displayName: id, role: .member, disabled: false, passwordHash: nil,
                          createdAt: .init(timeIntervalSince1970: 0)),
               credential: credential)
    }

    private func streams(streams: Int = 2, exports: Int = 1) -> OpenStreams {
        var limits = StreamLimits()
        limits.maxStreamsPerUser = streams
        limits.maxExportsPerUser = exports
        return OpenStreams(limits: limits)
    }

    func testEachUserAndKindIsCountedOnItsOwn() throws {
        let open = streams()
        let carol = caller("carol", .session(id: "s1"))
        let tickets = try [open.admit(carol, .stream), open.admit(caller("carol", .apiToken(id: "t1")), .stream)]
        XCTAssertThrowsError(try open.admit(carol, .stream)) { error in
            XCTAssertEqual((error as? HTTPError)?.code, "too_many_streams")
        }
        let export = try open.admit(carol, .export)
        XCTAssertThrowsError(try open.admit(carol, .export)) { error in
            XCTAssertEqual((error as? HTTPError)?.code, "too_many_exports")
        }
        let bobs = try open.admit(caller("bob", .session(id: "s2")), .stream)
        XCTAssertEqual(open.count(of: "carol", .stream), 2)
        XCTAssertEqual(open.count(of: "carol", .export), 1)
        XCTAssertEqual(open.count(of: "bob", .stream), 1)
        withExtendedLifetime((tickets, export, bobs)) {}
    }

    /// A credential revoked between the request's authentication and its admission: the revoke's `end`
    /// found no slot, so the second look at the credential refuses the stream (401) and frees the slot.
    func testAStreamWhoseCredentialIsGoneByAdmissionIsRefused() throws {
        var limits = StreamLimits()
        limits.maxStreamsPerUser = 2
        let revoked: Set<String> = ["s-gone"]
        let open = OpenStreams(limits: limits) { caller in
            if case .session(let id) = caller.credential { return !revoked.contains(id) }
            return true
        }
        XCTAssertThrowsError(try open.admit(caller("carol", .session(id: "s-gone")), .stream)) { error in
            XCTAssertEqual((error as? HTTPError)?.status, 401)
        }
        XCTAssertEqual(open.count(of: "carol", .stream), 0, "the slot taken for the look is freed")
        let live = try open.admit(caller("carol", .session(id: "s-live")), .stream)
        XCTAssertEqual(open.count(of: "carol", .stream), 1)
        withExtendedLifetime(live) {}
    }

    func testATicketIsReleasedOnceWhetherReleasedOrDropped() throws {
        let open = streams()
        let carol = caller("carol", .session(id: "s1"))
        let released = try open.admit(carol, .stream)
        released.release()
        released.release()
        XCTAssertEqual(open.count(of: "carol", .stream), 0)
        do {
            // A body the HTTP layer never started: the ticket only goes away.
            _ = try open.admit(carol, .stream)
        }
        XCTAssertEqual(open.count(of: "carol", .stream), 0, "a dropped ticket frees its slot")
        let kept = try (open.admit(carol, .stream), open.admit(carol, .stream))
        XCTAssertEqual(open.count(of: "carol", .stream), 2, "released twice never frees a slot it does not hold")
        withExtendedLifetime(kept) {}
    }

    func testEndingACredentialRevokesItsTicketsOnly() throws {
        let open = streams(streams: 4)
        let session = try open.admit(caller("carol", .session(id: "s1")), .export)
        let token = try open.admit(caller("carol", .apiToken(id: "t1")), .stream)
        let bobs = try open.admit(caller("bob", .session(id: "s1")), .stream)
        XCTAssertEqual(open.end(of: "carol") { $0 == .session(id: "s1") }, 1)
        XCTAssertTrue(session.isRevoked)
        XCTAssertFalse(token.isRevoked)
        XCTAssertFalse(bobs.isRevoked, "another user's session of the same id is not touched")
        XCTAssertEqual(open.count(of: "carol", .export), 1, "a revoked slot is held until its stream ends")
        XCTAssertEqual(open.end(of: "carol"), 1, "already revoked ones are not counted again")
        XCTAssertTrue(token.isRevoked)
    }
}
