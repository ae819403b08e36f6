import ParleyPrimitives

/// One frame of an OpenAI Chat Completions stream (`chat.completion.chunk`), as far as Parley reads
/// it. Decoded with `JSONDecoder` so text keeps every character (see `LenientDecoding`); every field
/// is optional and a field of an unexpected type reads as absent.
struct OpenAIChunk: Decodable {
    var error: UpstreamErrorField?
    var usage: Usage?
    var choices: [Choice]?

    struct Usage: Decodable {
        var promptTokens: Int?
        var completionTokens: Int?

        private enum CodingKeys: String, CodingKey {
            case promptTokens = "prompt_tokens"
            case completionTokens = "completion_tokens"
        }

        init(from decoder: Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            promptTokens = container.integer(.promptTokens)
            completionTokens = container.integer(.completionTokens)
        }
    }

    struct Choice: Decodable {
        var index: Int?
        var delta: Delta?
        var finishReason: String?
        /// `logprobs.content`: the streamed tokens' log probabilities, kept as raw JSON items.
        var logprobs: [JSON]?

        private enum CodingKeys: String, CodingKey {
            case index, delta, logprobs
            case finishReason = "finish_reason"
        }

        private enum LogprobsKeys: String, CodingKey {
            case content
        }

        init(from decoder: Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            index = container.integer(.index)
            delta = container.lenient(Delta.self, .delta)
            finishReason = container.text(.finishReason)
            let logprobs = try? container.nestedContainer(keyedBy: LogprobsKeys.self, forKey: .logprobs)
            self.logprobs = logprobs?.lenient([JSON].self, .content)
        }
    }

    struct Delta: Decodable {
        /// `reasoning_content` (llama.cpp, vLLM, DeepSeek) or `reasoning` (Ollama, OpenRouter).
        var reasoning: String?
        var content: String?
        var toolCalls: [ToolCall]?

        private enum CodingKeys: String, CodingKey {
            case content, reasoning
            case reasoningContent = "reasoning_content"
            case toolCalls = "tool_calls"
        }

        init(from decoder: Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            reasoning = container.text(.reasoningContent) ?? container.text(.reasoning)
            content = container.text(.content)
            toolCalls = container.lenient([ToolCall].self, .toolCalls)
        }
    }

    struct ToolCall: Decodable {
        var index: Int?
        var id: String?
        var name: String?
        var arguments: String?

        private enum CodingKeys: String, CodingKey {
            case index, id, function
        }

        private enum FunctionKeys: String, CodingKey {
            case name, arguments
        }

        init(from decoder: Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            index = container.integer(.index)
            id = container.text(.id)
            let function = try? container.nestedContainer(keyedBy: FunctionKeys.self, forKey: .function)
            name = function?.text(.name)
            arguments = function?.lenient(String.self, .arguments)
        }
    }

    private enum CodingKeys: String, CodingKey {
        case error, usage, choices
    }

    init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        error = container.lenient(UpstreamErrorField.self, .error)
        usage = container.lenient(Usage.self, .usage)
        choices = container.lenient([Choice].self, .choices)
    }
}
