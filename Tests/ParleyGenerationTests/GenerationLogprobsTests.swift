import Foundation
@testable import ParleyGeneration
import ParleyPrimitives
import ParleyProviders
import ParleyStore
import Synchronization
import XCTest

/// Log probabilities (`ProviderEvent.logprobs`) become logged `logprobs` events right after the text
/// they describe, are collected for a non-streaming /v1 answer, and stop being kept past `maxLogprobItems`.
final class GenerationLogprobsTests: XCTestCase {
    /// Streams "a" five times, each followed by one log probability item for it.
    private struct Scripted: ChatProvider {
        var name: String { "scripted" }
        var supportsPrefill: Bool { false }
        var supportsTools: Bool { false }
        func models() async -> [ModelInfo] { [ModelInfo(provider: name, model: "m", label: "m")] }
        func refusal(_ options: ChatOptions) -> String? { nil }

        func stream(_ request: ChatRequest) -> AsyncThrowingStream<ProviderEvent, Error> {
            AsyncThrowingStream { continuation in
                for index in 0..<5 {
                    continuation.yield(.text("a"))
                    continuation.yield(.logprobs([.object(["token": .string("a"), "logprob": .number(Double(-index))])]))
                }
                continuation.yield(.finish(.stop))
                continuation.finish()
            }
        }
    }

    func testLogprobsFollowTheirTextAndStopAtTheLimit() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("parley-logprobs-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try Store(path: directory.appendingPathComponent("parley.sqlite").path)
        let generations = Generations(
            store: store, providers: ProviderRegistry(providers: [Scripted()], demo: DemoProvider(tokensPerSecond: 0)),
            limits: GenerationLimits(maxLogprobItems: 3))
        let conversation = try store.createConversation(model: "scripted:m")
        let (_, reply) = try await generations.send(conversationID: conversation.id, placement: .afterCurrentLeaf,
                                                   content: "hello", model: nil, owner: User.localID,
                                                   options: ChatOptions(logprobs: true))
        _ = try await generations.outcome(of: reply.id)

        let collected = await generations.logprobs(of: reply.id)
        let kept = try XCTUnwrap(collected)
        XCTAssertEqual(kept.map { $0["logprob"] }, [.number(0), .number(-1), .number(-2)], "the first three, in order")

        // The whole run from its start, as a /v1 relay that asked for them subscribes.
        let start = await generations.logStartID(of: reply.id)
        XCTAssertNotNil(start)
        let events = Mutex<[GenerationEvent]>([])
        _ = try await generations.subscribe(messageID: reply.id, after: start) { batch in
            events.withLock { $0 += batch }
            return true
        }
        var kinds: [String] = []
        var text = ""
        for event in events.withLock({ $0 }) {
            switch event.payload {
            case .delta(let piece):
                text += piece
                if kinds.last != "delta" { kinds.append("delta") }
            case .logprobs(let items):
                kinds.append("logprobs:\(items.count):\(text.count)")
            default:
                break
            }
        }
        XCTAssertEqual(text, "aaaaa")
        XCTAssertEqual(Array(kinds.prefix(6)), ["delta", "logprobs:1:1", "delta", "logprobs:1:2", "delta", "logprobs:1:3"],
                       "each item right after the text it describes")
        XCTAssertEqual(kinds.filter { $0.hasPrefix("logprobs") }.count, 3, "none past the limit")
    }
}
