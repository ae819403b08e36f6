import XCTest

@testable import ParleyHTTP

final class RouterTests: XCTestCase {
    private let ok: Router.Handler = { _ in .text("ok") }

    func testPatternCapturesNamedSegments() {
        var router = Router()
        router.on("GET", "/api/conversations/:id/messages/:messageID", ok)
        guard case .handler(_, let parameters) = router.match(
            method: "GET", segments: ["api", "conversations", "c1", "messages", "m 2"])
        else { return XCTFail("expected a match") }
        XCTAssertEqual(parameters, ["id": "c1", "messageID": "m 2"])
    }

    func testSegmentCountMustMatchExactly() {
        var router = Router()
        router.on("GET", "/api/items/:id", ok)
        guard case .noRoute = router.match(method: "GET", segments: ["api", "items", "1", "extra"]) else {
            return XCTFail("longer path must not match")
        }
        guard case .noRoute = router.match(method: "GET", segments: ["api", "items"]) else {
            return XCTFail("shorter path must not match")
        }
    }

    func testOtherMethodGivesAllowList() {
        var router = Router()
        router.on("GET", "/api/items", ok)
        router.on("POST", "/api/items", ok)
        guard case .methodNotAllowed(let allow) = router.match(method: "DELETE", segments: ["api", "items"]) else {
            return XCTFail("expected 405")
        }
        XCTAssertEqual(Set(allow), ["GET", "POST", "HEAD"])
    }

    func testHeadFallsBackToGet() {
        var router = Router()
        router.on("GET", "/api/items", ok)
        guard case .handler = router.match(method: "HEAD", segments: ["api", "items"]) else {
            return XCTFail("HEAD should use the GET route")
        }
    }

    func testTargetDecodesSegmentsAndQuery() {
        let target = RequestTarget(raw: "/a%20b/c%2Fd?x=1+2&y=%C3%A9&flag")
        XCTAssertEqual(target.segments, ["a b", "c/d"])
        XCTAssertEqual(target.path, "/a b/c/d")
        XCTAssertEqual(target.query, ["x": "1 2", "y": "é", "flag": ""])
        XCTAssertFalse(target.isMalformed)
    }

    func testTargetWithBadEscapeIsMalformed() {
        XCTAssertTrue(RequestTarget(raw: "/a%zz").isMalformed)
        XCTAssertTrue(RequestTarget(raw: "/a?x=%ff").isMalformed)
    }

    func testErrorJSONEscapesText() {
        let error = HTTPError(status: 400, code: "bad", message: "say \"hi\"\n")
        guard case .bytes(let body) = error.response.body else { return XCTFail("expected bytes") }
        XCTAssertEqual(String(decoding: body, as: UTF8.self), #"{"error":{"code":"bad","message":"say \"hi\"\n"}}"#)
    }
}
