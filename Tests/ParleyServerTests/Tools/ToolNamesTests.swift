@testable import ParleyTools
import XCTest

/// The function names providers see: `<server>__<tool>`, safe characters only, at most 64, never shared.
final class ToolNamesTests: XCTestCase {
    func testPlainNamesReplaceUnsafeCharacters() {
        let names = ToolNames(toolIDs: ["docs/search", "my.server/get weather", "x/é"])
        XCTAssertEqual(names.names["docs/search"], "docs__search")
        XCTAssertEqual(names.names["my.server/get weather"], "my_server__get_weather")
        XCTAssertEqual(names.names["x/é"], "x___")
        XCTAssertEqual(names.renamed, [])
    }

    func testLongAndClashingNamesGetAHashSuffixAndStayUnique() {
        let long = "s/" + String(repeating: "a", count: 80)
        let names = ToolNames(toolIDs: ["a.b/c", "a_b/c", long, "a-b/c"])
        XCTAssertEqual(names.names["a.b/c"], "a_b__c")
        let clash = try? XCTUnwrap(names.names["a_b/c"])
        XCTAssertNotEqual(clash, "a_b__c")
        XCTAssertEqual(clash?.count, "a_b__c".count + 9)
        XCTAssertEqual(names.names[long]?.count, 64)
        XCTAssertEqual(Set(names.names.values).count, 4)
        XCTAssertEqual(Set(names.renamed), ["a_b/c", long])
        for name in names.names.values {
            XCTAssertNotNil(name.range(of: "^[a-zA-Z0-9_-]{1,64}$", options: .regularExpression), name)
        }
    }

    func testTheSameIDsGiveTheSameNames() {
        XCTAssertEqual(ToolNames(toolIDs: ["a.b/c", "a_b/c"]).names, ToolNames(toolIDs: ["a.b/c", "a_b/c"]).names)
    }
}
