import ParleyPrimitives
import ParleyStore
import XCTest

/// `JSON` (ParleyPrimitives): the value tool schemas, arguments and results travel as.
final class JSONTests: XCTestCase {
    func testParsesEveryKindAndWritesSortedCompactText() throws {
        let value = try XCTUnwrap(JSON(parsing: #"{"b":[1,2.5,"x",null,true],"a":{"z":-3,"y":"é\u00e9"}}"#))
        XCTAssertEqual(value["b"], .array([.integer(1), .number(2.5), .string("x"), .null, .bool(true)]))
        XCTAssertEqual(value.text, #"{"a":{"y":"éé","z":-3},"b":[1,2.5,"x",null,true]}"#)
    }

    func testIntegersStayIntegersAndLargeOnesKeepTheirDigits() throws {
        XCTAssertEqual(JSON(parsing: "9007199254740993")?.text, "9007199254740993")
        XCTAssertEqual(JSON(parsing: "1.0")?.doubleValue, 1)
    }

    func testNotJSONIsNil() {
        XCTAssertNil(JSON(parsing: "{\"a\":"))
        XCTAssertNil(JSON(parsing: "{'a':1}"))
        XCTAssertNil(JSON(parsing: ""))
    }

    func testRoundTripsTheTextItWrote() throws {
        let value = JSON.object(["path": .string("/a/b"), "n": .array([]), "o": .object([:])])
        XCTAssertEqual(JSON(parsing: value.text), value)
        XCTAssertEqual(value.text, #"{"n":[],"o":{},"path":"/a/b"}"#)
    }

    func testANonFiniteNumberIsNullWhereItStandsNotTheWholeText() {
        let value = JSON.array([.string("kept"), .object(["n": .number(.infinity), "m": .number(-.infinity)]), .number(.nan)])
        XCTAssertEqual(value.text, #"["kept",{"m":null,"n":null},null]"#)
        let parts: [MessagePart] = [.text("hello", html: nil),
                                    .surface(SurfacePart(surfaceID: "s", messages: [.object(["n": .number(.infinity)])]))]
        let stored = MessagePart.parts(storedText: MessagePart.storedText(parts))
        XCTAssertEqual(stored?.count, 2, "every part is kept")
        XCTAssertEqual(stored?.first, .text("hello", html: nil))
    }
}
