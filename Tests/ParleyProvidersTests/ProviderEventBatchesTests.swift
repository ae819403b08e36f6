import Foundation
import ParleyProviders
import ParleyTestSupport
import ParleyUpstream
import XCTest

/// `ChatProvider.events`: an HTTP provider's call read in the consumer's isolation, one batch per
/// upstream read (what a reply consumes), with the same events and errors as `stream`.
final class ProviderEventBatchesTests: XCTestCase {
    private let client = sharedClient

    private func provider(_ fake: FakeUpstream) -> OpenAICompatibleProvider {
        OpenAICompatibleProvider(baseURL: fake.baseURL + "/v1", client: client,
                                 retry: RetryPolicy(maxRetries: 0, maxRetryAfter: .seconds(1), backoff: .milliseconds(10)))
    }

    private static func chunk(_ text: String) -> String {
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\(text)\"}}]}\n\n"
    }

    /// Reads every batch in an actor's isolation, as a reply does.
    private actor Reader {
        var batches: [[ProviderEvent]] = []
        var error: Error?

        func read(_ events: ProviderEventBatches) async {
            var iterator = events.makeAsyncIterator()
            do {
                while let batch = try await iterator.next(isolation: self) { batches.append(batch) }
            } catch {
                self.error = error
            }
        }
    }

    func testOneReadOfSeveralEventsIsOneBatch() async throws {
        let fake = try FakeUpstream()
        let finish = "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"
        fake.enqueue(.eventStream(writes: [Self.chunk("a") + Self.chunk("b") + Self.chunk("c"), finish],
                                  delayMilliseconds: 50))
        let reader = Reader()
        await reader.read(provider(fake).events(ChatRequest(model: "m", messages: userHello)))
        let batches = await reader.batches
        let error = await reader.error
        XCTAssertNil(error)
        XCTAssertEqual(batches.flatMap { $0 }, [.text("a"), .text("b"), .text("c"), .finish(.stop)])
        // The three chunks were written at once: they come in one batch, not one hop each.
        XCTAssertTrue(batches.contains { $0.count >= 3 }, "\(batches)")
    }

    func testEventsBeforeAFaultInTheSameReadComeFirst() async throws {
        let fake = try FakeUpstream()
        fake.enqueue(.eventStream(writes: [Self.chunk("a") + "data: {\"choices\":[{\"index\":0,\n\n"]))
        let reader = Reader()
        await reader.read(provider(fake).events(ChatRequest(model: "m", messages: userHello)))
        let batches = await reader.batches
        let error = await reader.error
        XCTAssertEqual(batches.flatMap { $0 }, [.text("a")])
        XCTAssertEqual((error as? ProviderError)?.code, .upstreamProtocol)
    }

    func testAStreamIsOneEventPerBatch() async throws {
        let stream = AsyncThrowingStream<ProviderEvent, Error> { continuation in
            continuation.yield(.text("x"))
            continuation.yield(.finish(.stop))
            continuation.finish()
        }
        let reader = Reader()
        await reader.read(ProviderEventBatches(stream))
        let batches = await reader.batches
        XCTAssertEqual(batches, [[.text("x")], [.finish(.stop)]])
    }
}
