@testable import ParleyCluster
import ParleyGeneration
import ParleyPrimitives
import ParleyRedis
import ParleyStore
import XCTest

/// Every kind of reply event through its Redis entry and back, unchanged; entries this version did not
/// write (a missing or malformed field, an unknown kind, a sequence on a logged event) give nil.
final class ReplyEventCodecTests: XCTestCase {
    private func roundTrip(_ payload: GenerationEvent.Payload, sequence: UInt64 = 0) -> GenerationEvent? {
        let entry = RedisStreamEntry(id: RedisStreamID(milliseconds: 1_796_500_000_000_123, sequence: sequence),
                                     fields: ReplyEventCodec.fields(payload))
        return ReplyEventCodec.event(entry)
    }

    /// An event as its id and its fields: payloads are not Equatable, and a field set decides what
    /// is written (JSON with sorted keys, so the same value is always the same text).
    private func described(_ event: GenerationEvent?) -> String {
        event.map { event in
            "\(event.id) " + ReplyEventCodec.fields(event.payload)
                .map { String(decoding: $0.name, as: UTF8.self) + "=" + String(decoding: $0.value, as: UTF8.self) }
                .joined(separator: " ")
        } ?? "nil"
    }

    func testEveryPayloadComesBackUnchanged() {
        let call = ToolCallPart(id: "c1", providerID: "call_9", tool: "docs/search", name: "docs__search",
                                argumentsText: "{\"q\":\"é\"}", arguments: .object(["q": .string("é")]), status: .complete,
                                decision: .approve, result: ToolCallResult(content: [.object(["type": .string("text"), "text": .string("ok")])],
                                                                           structuredContent: .object(["n": .integer(1)]), isError: false),
                                round: 2)
        let snapshot = GenerationSnapshot(messageID: "m1", status: .streaming, blocks: ["<p>a</p>\n", "<h2>b</h2>\n"],
                                          tail: "- c", tailHTML: "<ul><li>c</li></ul>", content: "a\n\n## b\n\n- c",
                                          reasoning: "think 🤔", parts: [.reasoning("think 🤔"), .text("a", firstBlock: 0, blockCount: 1),
                                                                        .toolCall(call), .text("## b\n\n- c", firstBlock: 1, blockCount: 1),
                                                                        .surface(SurfacePart(surfaceID: "s1", messages: [.object(["x": .null])]))])
        let outcome = GenerationOutcome(status: .complete, finishReason: .stop,
                                        usage: ReplyTokens(inputTokens: 7, outputTokens: nil, estimated: true),
                                        patch: [BlockPatch(index: 1, html: "<h2>B</h2>\n")], blockCount: 3,
                                        errorCode: .upstreamTimeout, errorMessage: "slow")
        let payloads: [GenerationEvent.Payload] = [
            .snapshot(snapshot), .block(index: 4, html: "<p>日本語 👍🏽</p>\n"), .tail("\u{0}raw \r\n tail"),
            .tailAppend("more"), .delta("Héllo"), .reasoning("hmm"), .error(code: .nodeLost, message: "gone"),
            .toolCall(call), .toolCallDelta(id: "c1", argumentsDelta: "{\"q"), .toolResult(call),
            .surface(surfaceID: "s1", message: .object(["updateComponents": .array([])])),
            .logprobs([.object(["token": .string("a"), "logprob": .number(-0.5)])]), .done(outcome),
            .tailHTML("<p>x</p>", keep: 3),
        ]
        for payload in payloads {
            let event = GenerationEvent(id: 1_796_500_000_000_123, payload: payload)
            XCTAssertEqual(described(roundTrip(payload)), described(event))
        }
        XCTAssertEqual(described(roundTrip(.tailHTML(nil, keep: 0), sequence: 2)),
                       described(GenerationEvent(id: 1_796_500_000_000_123, payload: .tailHTML(nil, keep: 0))),
                       "a provisional event sits at N-k")
    }

    func testEntriesThisVersionDidNotWriteAreSkipped() {
        let id = RedisStreamID(milliseconds: 5, sequence: 0)
        let bad: [[RedisStreamEntry.Field]] = [
            [], [.init("k", "delta")], [.init("k", "block"), .init("t", "<p>")], [.init("k", "block"), .init("i", "x"), .init("t", "")],
            [.init("k", "whatever"), .init("t", "a")], [.init("k", "snapshot"), .init("j", "{not json")],
            [.init("k", "done"), .init("j", "{\"status\":\"nope\",\"block_count\":1,\"patch\":[]}")],
            [.init("k", "snapshot"), .init("j", "{\"message_id\":\"m\"}")],
        ]
        for fields in bad {
            XCTAssertNil(ReplyEventCodec.event(RedisStreamEntry(id: id, fields: fields)), "\(fields)")
        }
        XCTAssertNil(ReplyEventCodec.event(RedisStreamEntry(id: RedisStreamID(milliseconds: 5, sequence: 1),
                                                            fields: ReplyEventCodec.fields(.delta("a")))),
                     "only tail_html may sit between logged events")
        XCTAssertNil(ReplyEventCodec.event(RedisStreamEntry(id: .zero, fields: ReplyEventCodec.fields(.delta("a")))))
    }
}
