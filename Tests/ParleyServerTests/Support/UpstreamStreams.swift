import Foundation
import ParleyTestSupport

/// OpenAI-compatible SSE frames, written by hand so tests control every byte the fake upstream sends.
enum UpstreamStreams {
    static func chunk(_ text: String) -> String {
        let escaped = String(decoding: try! JSONSerialization.data(withJSONObject: [text]), as: UTF8.self)
        return "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\(escaped.dropFirst().dropLast())},\"finish_reason\":null}]}\n\n"
    }

    /// A reasoning delta under `reasoning_content` (llama.cpp, vLLM, DeepSeek) or `reasoning` (Ollama, OpenRouter).
    static func reasoning(_ text: String, field: String = "reasoning_content") -> String {
        let escaped = String(decoding: try! JSONSerialization.data(withJSONObject: [text]), as: UTF8.self)
        return "data: {\"choices\":[{\"index\":0,\"delta\":{\"\(field)\":\(escaped.dropFirst().dropLast())},\"finish_reason\":null}]}\n\n"
    }

    static func finish(_ reason: String = "stop") -> String {
        "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"\(reason)\"}]}\n\n"
            + "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":7,\"completion_tokens\":3}}\n\ndata: [DONE]\n\n"
    }

    /// A complete stream of `tokens`, cut into TCP writes every `cut` bytes (inside UTF-8 characters too).
    static func complete(_ tokens: [String], cut: Int = 0, delayMilliseconds: Int = 0) -> FakeUpstream.Script {
        let body = Array((tokens.map(chunk).joined() + finish()).utf8)
        guard cut > 0 else {
            return .eventStream(writes: tokens.map(chunk) + [finish()], delayMilliseconds: delayMilliseconds)
        }
        return .eventStream(body, cuts: Array(stride(from: cut, to: body.count, by: cut)))
    }

    /// `tokens`, then the upstream hangs until the client goes (for stop and idle tests).
    static func stalling(after tokens: [String]) -> FakeUpstream.Script {
        .eventStream(writes: tokens.map(chunk), then: [.stall])
    }

    /// `script` holding its first byte until `start` opens (typically: until the test's client is
    /// subscribed, see `TestParley.events(attached:)`), and its last write (the finish) until
    /// `finish` opens.
    static func gated(_ script: FakeUpstream.Script, start: FakeUpstream.Gate? = nil,
                      finish: FakeUpstream.Gate? = nil) -> FakeUpstream.Script {
        var script = script
        if let finish, let last = script.steps.lastIndex(where: { if case .send = $0 { true } else { false } }) {
            script.steps.insert(.wait(finish), at: last)
        }
        if let start { script.steps.insert(.wait(start), at: 0) }
        return script
    }

    /// Tokens with a tiny UTF-8 zoo: accents, CJK, emoji with modifiers, a flag.
    static let zoo = ["Héllo", " wörld", " — ", "日本語", " 👍🏽", " 🇫🇷", "\n\n", "## Title", "\n\n",
                      "- one\n", "- two\n\n", "```swift\n", "let x = 1\n", "```\n", "\nDone."]
}
