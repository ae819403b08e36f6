import Foundation
import ParleyProviders
import ParleyTestSupport
import ParleyUpstream
import XCTest

/// What a provider stream produced: its events and the error that ended it, if any.
struct StreamOutcome {
    var events: [ProviderEvent] = []
    var error: Error?

    var text: String {
        events.compactMap { if case .text(let text) = $0 { text } else { nil } }.joined()
    }

    var reasoning: String {
        events.compactMap { if case .reasoning(let text) = $0 { text } else { nil } }.joined()
    }

    var finish: FinishReason? {
        events.compactMap { if case .finish(let reason) = $0 { reason } else { nil } }.last
    }

    var providerError: ProviderError? { error as? ProviderError }

    /// Tool calls accumulated by index: (id, name, arguments).
    var toolCalls: [Int: (id: String?, name: String?, arguments: String)] {
        var calls: [Int: (id: String?, name: String?, arguments: String)] = [:]
        for case .toolCall(let delta) in events {
            var call = calls[delta.index] ?? (nil, nil, "")
            if call.id == nil { call.id = delta.id }
            if call.name == nil { call.name = delta.name }
            call.arguments += delta.argumentsDelta
            calls[delta.index] = call
        }
        return calls
    }
}

/// Reads `stream` to its end; `each` sees every event as it arrives (to signal "the consumer got
/// this far", instead of sleeping).
func collect(_ stream: AsyncThrowingStream<ProviderEvent, Error>,
             each: @Sendable (ProviderEvent) -> Void = { _ in }) async -> StreamOutcome {
    var outcome = StreamOutcome()
    do {
        for try await event in stream {
            outcome.events.append(event)
            each(event)
        }
    } catch {
        outcome.error = error
    }
    return outcome
}

enum Fixture {
    static func bytes(_ name: String) throws -> [UInt8] {
        let parts = name.split(separator: ".")
        let url = try XCTUnwrap(Bundle.module.url(forResource: String(parts[0]), withExtension: String(parts[1]),
                                                  subdirectory: "Fixtures"))
        return Array(try Data(contentsOf: url))
    }

    static let stream1Text = "Hello, welcome to my little corner of the world!"
    static let toolArguments = "{ \"city\": \"Paris\" }"
}

let userHello = [ChatMessage(role: .system, content: "Be brief."), ChatMessage(role: .user, content: "Hello")]

/// One client for all provider tests (XCTest keeps every test case instance alive until the end).
let sharedClient = UpstreamClient()
