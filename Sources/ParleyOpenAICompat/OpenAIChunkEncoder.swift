import ParleyAPI
import ParleyHTTP
import ParleyOutcome
import ParleyPrimitives
import ParleyProviders
import ParleyStore

/// The JSON of the OpenAI-compatible endpoint's answers, byte for byte what OpenAI sends: the
/// `chat.completion.chunk` frames of a stream (`data: {…}\n\n`, then `data: [DONE]\n\n`) and the
/// `chat.completion` object of a call without `stream`. Pure values, no state: the relay says what
/// to write and when. `system_fingerprint` is left out: OpenAI types it as a string, and Parley has none.
struct OpenAIChunkEncoder: Sendable {
    /// `chatcmpl-` and the assistant message's id, the same in every chunk of one reply.
    let id: String
    /// Seconds since 1970 when the reply started.
    let created: Int
    /// The Parley model id that answered (`demo`, `openai:llama3`).
    let model: String
    /// `stream_options.include_usage`: every chunk carries `"usage":null`, and a last chunk with
    /// empty `choices` carries the usage.
    let includeUsage: Bool

    static let done: [UInt8] = Array("data: [DONE]\n\n".utf8)

    /// The first chunk: the role, with empty content (as OpenAI sends it).
    var roleChunk: [UInt8] { chunk(delta: "{\"role\":\"assistant\",\"content\":\"\"}", finishReason: nil) }

    /// A piece of the answer, with the log probabilities of its tokens when the client asked for them
    /// (`choices[0].logprobs.content`, the upstream's items as they came).
    func content(_ text: String, logprobs: [JSON]? = nil) -> [UInt8] {
        chunk(delta: "{\"content\":\(JSONString.literal(text))}", finishReason: nil, logprobs: logprobs)
    }

    /// The first chunk of tool call `index`: its id and function name, arguments empty (as OpenAI sends it).
    func toolCallStart(index: Int, id: String, name: String) -> [UInt8] {
        chunk(delta: "{\"tool_calls\":[{\"index\":\(index),\"id\":\(JSONString.literal(id)),\"type\":\"function\","
                  + "\"function\":{\"name\":\(JSONString.literal(name)),\"arguments\":\"\"}}]}", finishReason: nil)
    }

    /// A later chunk of tool call `index`: a fragment of its arguments, to be concatenated.
    func toolCallArguments(index: Int, fragment: String) -> [UInt8] {
        chunk(delta: "{\"tool_calls\":[{\"index\":\(index),\"function\":{\"arguments\":\(JSONString.literal(fragment))}}]}",
              finishReason: nil)
    }

    /// Reasoning ("thinking") as DeepSeek-style servers stream it: `reasoning_content` in the delta.
    func reasoning(_ text: String) -> [UInt8] {
        chunk(delta: "{\"reasoning_content\":\(JSONString.literal(text))}", finishReason: nil)
    }

    /// The last choice chunk: an empty delta and the finish reason.
    func finish(_ reason: String) -> [UInt8] {
        chunk(delta: "{}", finishReason: reason)
    }

    /// The usage chunk after the finish chunk (only with `include_usage`).
    func usage(_ usage: ReplyUsage?) -> [UInt8] {
        frame(head + "\"choices\":[],\"usage\":\(Self.usageObject(usage))}")
    }

    /// A failure after the stream began: OpenAI's error object as a chunk's data.
    static func error(_ error: OpenAIError) -> [UInt8] {
        Array("data: \(error.json)\n\n".utf8)
    }

    /// The whole answer of a call without `stream`: `message.tool_calls` when the model called tools
    /// (`content` then null if it wrote no text), `logprobs.content` when the client asked for them.
    func completion(content: String, reasoning: String, toolCalls: [ChatToolCall] = [], logprobs: [JSON]? = nil,
                    finishReason: String, usage: ReplyUsage?) -> [UInt8] {
        let reasoningField = reasoning.isEmpty ? "" : ",\"reasoning_content\":\(JSONString.literal(reasoning))"
        let contentValue = content.isEmpty && !toolCalls.isEmpty ? "null" : JSONString.literal(content)
        let callsField = toolCalls.isEmpty ? "" : ",\"tool_calls\":[" + toolCalls.map { call in
            "{\"id\":\(JSONString.literal(call.id)),\"type\":\"function\",\"function\":{\"name\":\(JSONString.literal(call.name)),"
                + "\"arguments\":\(JSONString.literal(call.arguments))}}"
        }.joined(separator: ",") + "]"
        let json = "{\"id\":\(JSONString.literal(id)),\"object\":\"chat.completion\",\"created\":\(created),"
            + "\"model\":\(JSONString.literal(model)),\"choices\":[{\"index\":0,"
            + "\"message\":{\"role\":\"assistant\",\"content\":\(contentValue),\"refusal\":null"
            + reasoningField + callsField + "},\"logprobs\":\(Self.logprobsObject(logprobs)),"
            + "\"finish_reason\":\(JSONString.literal(finishReason))}],"
            + "\"usage\":\(Self.usageObject(usage))}"
        return Array(json.utf8)
    }

    /// OpenAI's finish reason for a stored reply's (`stop`, `length`, `tool_calls`, `content_filter`;
    /// anything else, and a reply stopped by a client, is `stop`).
    static func finishReason(_ stored: FinishReason?) -> String {
        switch stored {
        case .length, .toolCalls, .contentFilter: stored?.rawValue ?? "stop"
        case .stop, .toolRounds, .other, nil: "stop"
        }
    }

    // MARK: - Pieces

    private var head: String {
        "{\"id\":\(JSONString.literal(id)),\"object\":\"chat.completion.chunk\",\"created\":\(created),"
            + "\"model\":\(JSONString.literal(model)),"
    }

    private func chunk(delta: String, finishReason: String?, logprobs: [JSON]? = nil) -> [UInt8] {
        let reason = finishReason.map(JSONString.literal) ?? "null"
        return frame(head + "\"choices\":[{\"index\":0,\"delta\":\(delta),\"logprobs\":\(Self.logprobsObject(logprobs)),"
                     + "\"finish_reason\":\(reason)}]" + (includeUsage ? ",\"usage\":null}" : "}"))
    }

    /// `{"content":[…],"refusal":null}` (OpenAI requires both keys), or `null` when none were asked for.
    private static func logprobsObject(_ items: [JSON]?) -> String {
        guard let items else { return "null" }
        return "{\"content\":\(JSON.array(items).text),\"refusal\":null}"
    }

    private func frame(_ json: String) -> [UInt8] {
        Array("data: \(json)\n\n".utf8)
    }

    /// `{"prompt_tokens","completion_tokens","total_tokens"}`; zeros when nothing was stored.
    private static func usageObject(_ usage: ReplyUsage?) -> String {
        let input = usage?.inputTokens ?? 0
        let output = usage?.outputTokens ?? 0
        return "{\"prompt_tokens\":\(input),\"completion_tokens\":\(output),\"total_tokens\":\(input + output)}"
    }
}
