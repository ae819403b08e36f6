@testable import ParleyOpenAICompat
import XCTest

/// `JSONMemberText`: a top-level member's value exactly as sent, never a nested one of the same name.
final class JSONMemberTextTests: XCTestCase {
    private func value(_ key: String, _ json: String) -> String? {
        JSONMemberText.value(of: key, in: Array(json.utf8))
    }

    func testTheValueIsTheClientsTextWithItsSpacingOrderAndNumbers() {
        let json = #" { "a" : 1.50 , "response_format" : { "z" : [1, {"b":"}\"]"}], "a": 2e3 } ,"n":null} "#
        XCTAssertEqual(value("response_format", json), #"{ "z" : [1, {"b":"}\"]"}], "a": 2e3 }"#)
        XCTAssertEqual(value("a", json), "1.50")
        XCTAssertEqual(value("n", json), "null")
        XCTAssertNil(value("b", json), "a nested key is not a member")
        XCTAssertNil(value("z", json))
    }

    func testScalarsAtTheEndAndRepeatedKeys() {
        XCTAssertEqual(value("s", #"{"s":"x,y}"}"#), #""x,y}""#)
        XCTAssertEqual(value("t", #"{"t":true}"#), "true")
        XCTAssertEqual(value("k", #"{"k":1,"k":[2]}"#), "1", "the first one counts, as JSONDecoder reads it")
        XCTAssertNil(value("k", "[1]"))
    }
}
