@testable import ParleyGeneration
import XCTest

/// The replay log and the id clock that make Last-Event-ID resumes exact.
final class EventLogTests: XCTestCase {
    private func log(_ payloads: [GenerationEvent.Payload], base: Int64 = 100) -> EventLog {
        var log = EventLog(baseID: base)
        for (offset, payload) in payloads.enumerated() {
            log.append(GenerationEvent(id: base + 1 + Int64(offset), payload: payload))
        }
        return log
    }

    private func kinds(_ events: [GenerationEvent]?) -> [String]? {
        events?.map { event in
            switch event.payload {
            case .snapshot: "snapshot"
            case .block(let index, _): "block\(index)"
            case .tail(let text): "tail:\(text)"
            case .tailAppend(let text): "append:\(text)"
            case .tailHTML(let html, let keep): "tail_html:\(keep):\(html ?? "null")"
            case .delta(let text): "delta:\(text)"
            case .reasoning(let text): "reasoning:\(text)"
            case .error: "error"
            case .toolCall(let call): "tool_call:\(call.id):\(call.status.rawValue)"
            case .toolCallDelta(let id, let fragment): "tool_call_delta:\(id):\(fragment)"
            case .toolResult(let call): "tool_result:\(call.id):\(call.status.rawValue)"
            case .logprobs(let items): "logprobs:\(items.count)"
            case .surface(let id, _): "surface:\(id)"
            case .done: "done"
            }
        }
    }

    func testReplayGivesExactlyTheEventsAfterTheID() {
        let log = log([.delta("a"), .block(index: 0, html: "<p>a</p>"), .delta("b"), .delta("c")])
        XCTAssertEqual(kinds(log.events(after: 100)), ["delta:a", "block0", "delta:b", "delta:c"])
        XCTAssertEqual(kinds(log.events(after: 102)), ["delta:b", "delta:c"])
        XCTAssertEqual(kinds(log.events(after: 104)), [])
    }

    func testOnlyTheLatestTailIsKeptAndReplayedInItsPlace() {
        let log = log([.tail("x"), .delta("1"), .tail("xy"), .delta("2"), .block(index: 0, html: "b")])
        XCTAssertEqual(kinds(log.events(after: 100)), ["delta:1", "tail:xy", "delta:2", "block0"])
        XCTAssertEqual(kinds(log.events(after: 103)), ["delta:2", "block0"], "the tail is older than the client's id")
    }

    func testIDsOutsideTheLogNeedASnapshot() {
        let log = log([.delta("a")])
        XCTAssertNil(log.events(after: 99), "before the log began")
        XCTAssertNil(log.events(after: 102), "an id the log never issued")
    }

    func testTheClockOnlyGrowsAndStartsAboveItsSeed() {
        let far = Int64(Date().timeIntervalSince1970 * 1_000_000) + 10_000_000_000
        var clock = EventIDClock(after: far)
        let first = clock.next()
        XCTAssertEqual(first, far + 1, "a seed ahead of the wall clock still wins")
        var previous = first
        for _ in 0..<1000 {
            let id = clock.next()
            XCTAssertGreaterThan(id, previous)
            previous = id
        }
    }
}
