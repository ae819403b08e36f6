@testable import ParleyGeneration
import XCTest

/// `tail_append` in the replay log: a resumed client gets the latest `tail` it has not seen and
/// every append after what it has, so its tail ends equal to the live one.
final class EventLogTailAppendTests: XCTestCase {
    private func log(_ payloads: [GenerationEvent.Payload], base: Int64 = 100) -> EventLog {
        var log = EventLog(baseID: base)
        for (offset, payload) in payloads.enumerated() {
            log.append(GenerationEvent(id: base + 1 + Int64(offset), payload: payload))
        }
        return log
    }

    /// The tail a client shows after applying `events` to `tail`.
    private func apply(_ events: [GenerationEvent], to tail: String) -> String {
        events.reduce(tail) { tail, event in
            switch event.payload {
            case .tail(let text): text
            case .tailAppend(let text): tail + text
            default: tail
            }
        }
    }

    private let payloads: [GenerationEvent.Payload] = [
        .tailAppend("```"), .tailAppend("\ncode"), .delta("x"), .tailAppend("\nmore"),  // 101...104
        .block(index: 0, html: "<pre>"), .tail("\n"), .tailAppend("- a"), .tailAppend("\n- b"),  // 105...108
        .delta("y"),  // 109
    ]

    func testEveryResumePointEndsWithTheLiveTail() throws {
        let log = log(payloads)
        // The tail a client has after seeing everything up to each id.
        var tails: [Int64: String] = [100: ""]
        var tail = ""
        for (offset, payload) in payloads.enumerated() {
            tail = apply([GenerationEvent(id: 0, payload: payload)], to: tail)
            tails[101 + Int64(offset)] = tail
        }
        for id in Int64(100)...109 {
            let replay = try XCTUnwrap(log.events(after: id), "id \(id)")
            let ids = replay.map(\.id)
            XCTAssertEqual(ids, ids.sorted(), "id order after \(id)")
            XCTAssertTrue(ids.allSatisfy { $0 > id }, "nothing the client has seen, after \(id)")
            XCTAssertEqual(apply(replay, to: tails[id] ?? "?"), "\n- a\n- b", "resumed after \(id)")
        }
    }

    func testAppendsBeforeTheLatestTailAreNotKept() throws {
        let replay = try XCTUnwrap(log(payloads).events(after: 100))
        let tailEvents = replay.filter {
            switch $0.payload {
            case .tail, .tailAppend: true
            default: false
            }
        }
        XCTAssertEqual(tailEvents.map(\.id), [106, 107, 108], "the code's appends were superseded by the tail")
        XCTAssertEqual(replay.map(\.id), [103, 105, 106, 107, 108, 109])
    }
}
