import Foundation
@testable import ParleyEvents
import ParleyGeneration
import ParleyPrimitives
import ParleySSE
import ParleyTestSupport
import XCTest

/// `logprobs: true` (with `top_logprobs`) on an OpenAI-compatible upstream: forwarded, and the upstream's
/// `choices[0].logprobs.content` items relayed in OpenAI's shape, each streamed after the text they
/// describe and all of them in a non-streaming answer. A page's reply stream never carries them.
final class OpenAILogprobsTests: XCTestCase {
    /// One item per token, with two alternatives each, as OpenAI writes them.
    private static func item(_ token: String, _ logprob: Double) -> String {
        let bytes = Array(token.utf8).map(String.init).joined(separator: ",")
        return #"{"token":"# + literal(token) + #","logprob":\#(logprob),"bytes":[\#(bytes)],"top_logprobs":["#
            + #"{"token":"# + literal(token) + #","logprob":\#(logprob),"bytes":[\#(bytes)]},"#
            + #"{"token":"x","logprob":-9.5,"bytes":[120]}]}"#
    }

    private static func literal(_ text: String) -> String {
        let data = (try? JSONSerialization.data(withJSONObject: [text])) ?? Data("[\"\"]".utf8)
        return String(String(decoding: data, as: UTF8.self).dropFirst().dropLast())
    }

    /// Chunks: role, then per piece its text and the items of its tokens, then finish and `[DONE]`.
    private static let pieces: [(text: String, items: [String])] = [
        ("Hel", [item("Hel", -0.25)]),
        ("lo wö", [item("lo", -0.5), item(" wö", -1.75)]),
        ("rld", [item("rld", -0.125)]),
    ]

    private static func script() -> FakeUpstream.Script {
        func chunk(_ choice: String) -> String {
            #"data: {"id":"chatcmpl-fake","object":"chat.completion.chunk","choices":[{"index":0,"# + choice + "}]}\n\n"
        }
        var writes = [chunk(#""delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null"#)]
        for piece in pieces {
            writes.append(chunk(#""delta":{"content":"# + literal(piece.text) + #"},"logprobs":{"content":["#
                                + piece.items.joined(separator: ",") + #"],"refusal":null},"finish_reason":null"#))
        }
        writes.append(chunk(#""delta":{},"logprobs":null,"finish_reason":"stop""#))
        writes.append("data: [DONE]\n\n")
        return .eventStream(writes: writes)
    }

    private static var allItems: [Any] {
        pieces.flatMap(\.items).map { try! JSONSerialization.jsonObject(with: Data($0.utf8)) }
    }

    private func post(_ parley: TestParley, stream: Bool, logprobs: Bool = true) async throws -> TestParley.Reply {
        var body: [String: Any] = ["model": "openai:fake", "stream": stream,
                                   "messages": [["role": "user", "content": "hi"]]]
        if logprobs {
            body["logprobs"] = true
            body["top_logprobs"] = 2
        }
        return try await parley.call("POST", "/v1/chat/completions", json: body)
    }

    func testStreamedLogprobsFollowTheTextTheyDescribeInOpenAIsShape() async throws {
        let upstream = try startUpstream()
        upstream.enqueue(Self.script())
        let parley = try startParley(upstream: upstream)
        let reply = try await post(parley, stream: true)
        XCTAssertEqual(reply.status, 200, reply.text)
        let sent = try XCTUnwrap(upstream.requests.last?.jsonBody)
        XCTAssertEqual(sent["logprobs"] as? Bool, true)
        XCTAssertEqual(sent["top_logprobs"] as? Int, 2)

        var decoder = SSEDecoder()
        let data = try decoder.decode(Array(reply.text.utf8)).map(\.data)
        XCTAssertEqual(data.last, "[DONE]")
        let choices = data.dropLast().compactMap {
            ((try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any])?["choices"] as? [[String: Any]]
        }.compactMap(\.first)
        var text = ""
        var relayed: [Any] = []
        var tokens = ""
        for choice in choices {
            XCTAssertTrue(choice.keys.contains("logprobs"), "every choice has the key")
            text += (choice["delta"] as? [String: Any])?["content"] as? String ?? ""
            guard let logprobs = choice["logprobs"] as? [String: Any] else {
                XCTAssertTrue(choice["logprobs"] is NSNull)
                continue
            }
            XCTAssertTrue(logprobs["refusal"] is NSNull)
            let items = try XCTUnwrap(logprobs["content"] as? [[String: Any]])
            XCTAssertFalse(items.isEmpty)
            relayed += items
            tokens += items.compactMap { $0["token"] as? String }.joined()
            XCTAssertTrue(text.hasPrefix(tokens), "the text an item describes was sent before it: \(text) / \(tokens)")
        }
        XCTAssertEqual(text, "Hello wörld")
        XCTAssertEqual(tokens, "Hello wörld")
        XCTAssertEqual(relayed as NSArray, Self.allItems as NSArray, "every item, in order, as the upstream sent it")
    }

    func testANonStreamingAnswerCarriesEveryItem() async throws {
        let upstream = try startUpstream()
        upstream.enqueue(Self.script(), Self.script())
        let parley = try startParley(upstream: upstream)
        let reply = try await post(parley, stream: false)
        XCTAssertEqual(reply.status, 200, reply.text)
        let choice = try XCTUnwrap((reply.json["choices"] as? [[String: Any]])?.first)
        XCTAssertEqual((choice["message"] as? [String: Any])?["content"] as? String, "Hello wörld")
        let logprobs = try XCTUnwrap(choice["logprobs"] as? [String: Any], reply.text)
        XCTAssertEqual(logprobs["content"] as? NSArray, Self.allItems as NSArray)
        XCTAssertTrue(logprobs["refusal"] is NSNull)

        // Not asked for: none are relayed (even if the upstream sends some), and none are asked upstream.
        let plain = try await post(parley, stream: false, logprobs: false)
        XCTAssertEqual(plain.status, 200, plain.text)
        XCTAssertTrue((plain.json["choices"] as? [[String: Any]])?.first?["logprobs"] is NSNull, plain.text)
        let sent = try XCTUnwrap(upstream.requests.last?.jsonBody)
        XCTAssertNil(sent["logprobs"])
        XCTAssertNil(sent["top_logprobs"])
    }

    func testAPageStreamNeverCarriesLogprobs() throws {
        let item = try XCTUnwrap(JSON(parsing: #"{"token":"a","logprob":-1,"bytes":[97],"top_logprobs":[]}"#))
        let events = [GenerationEvent(id: 5, payload: .logprobs([item]))]
        for mode in [EventStreamEncoder.Mode.html, .text] {
            XCTAssertEqual(EventStreamEncoder(mode: mode).encode(events), [], "\(mode)")
        }
    }
}
