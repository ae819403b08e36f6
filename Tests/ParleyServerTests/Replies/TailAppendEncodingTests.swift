@testable import ParleyEvents
import ParleyGeneration
@testable import ParleyServer
import XCTest

/// `tail_append` on the wire: html mode only, `{"text"}` escaped like every other event; text mode
/// is unchanged (its clients get `delta`).
final class TailAppendEncodingTests: XCTestCase {
    private let events = [
        GenerationEvent(id: 7, payload: .tail("```js\n")),
        GenerationEvent(id: 8, payload: .tailAppend("let s = \"<\\n>\";\n")),
        GenerationEvent(id: 9, payload: .delta("let s = \"<\\n>\";\n")),
    ]

    func testHTMLModeSendsTheAppendAsItsOwnEvent() {
        let wire = String(decoding: EventStreamEncoder(mode: .html).encode(events), as: UTF8.self)
        XCTAssertEqual(wire, """
            id: 7
            event: tail
            data: {"text":"```js\\n"}

            id: 8
            event: tail_append
            data: {"text":"let s = \\"<\\\\n>\\";\\n"}


            """)
    }

    func testTextModeSendsNoTailEvents() {
        let wire = String(decoding: EventStreamEncoder(mode: .text).encode(events), as: UTF8.self)
        XCTAssertFalse(wire.contains("tail"))
        XCTAssertTrue(wire.hasPrefix("id: 9\nevent: delta\n"))
    }
}
