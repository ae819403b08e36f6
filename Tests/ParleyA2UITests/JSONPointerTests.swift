import ParleyA2UI
import ParleyPrimitives
import XCTest

/// A binding's path: bounded in segments (the depth limit), and `.` is a template's item itself.
final class JSONPointerTests: XCTestCase {
    func testAPathHasAtMostTheDepthLimitOfSegments() throws {
        for path in [String(repeating: "/", count: 1_000), String(repeating: "a/", count: 500)] {
            XCTAssertThrowsError(try JSONPointer(path), String(path.prefix(10))) { error in
                XCTAssertTrue((error as? SurfaceError)?.message.contains("more than 32 segments") ?? false, "\(error)")
            }
        }
        let deepest = "/" + Array(repeating: "a", count: 32).joined(separator: "/")
        XCTAssertEqual(try JSONPointer(deepest).tokens.count, 32)
        XCTAssertThrowsError(try JSONPointer(deepest + "/a"))
        XCTAssertThrowsError(try JSONPointer("/a/b/c", maxSegments: 2))
        // The board passes its own limit.
        var board = SurfaceBoard(limits: SurfaceLimits(maxDepth: 4), images: .trusted)
        _ = board.apply(A2UISamples.create("s"))
        _ = board.apply(A2UISamples.components("s", [A2UISamples.text("root")]))
        guard case .refused(let error) = board.apply(A2UISamples.data("s", path: "/a/b/c/d/e", .integer(1))) else {
            return XCTFail("a five-segment path under a depth of 4 was taken")
        }
        XCTAssertTrue(error.message.contains("more than 4 segments"), error.message)
    }

    func testADotIsTheTemplateItemItself() throws {
        let dot = try JSONPointer(".")
        XCTAssertTrue(dot.isRelative)
        XCTAssertEqual(dot.tokens, [])
        XCTAssertEqual(dot.resolve(in: .string("/api/files/x")), .string("/api/files/x"))
        XCTAssertThrowsError(try JSONPointer(".", allowRelative: false))
    }
}
