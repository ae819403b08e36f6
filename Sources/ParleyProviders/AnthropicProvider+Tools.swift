import ParleyPrimitives

/// Anthropic's form of a conversation with tool calls: an assistant turn is content blocks (its text,
/// then one `tool_use` per call); the results are `tool_result` blocks of the next user turn. The API
/// wants user and assistant turns to alternate, so consecutive `.tool` messages make ONE user turn, and
/// a user message right after them joins that turn as a text block. A user turn with images is
/// content blocks too (`ChatRequestBody.anthropicBlocks`): images, then the text.
extension AnthropicProvider {
    /// The non-system messages as Anthropic turns.
    static func messages(_ messages: [ChatMessage]) -> [ChatRequestBody.Message] {
        var turns: [ChatRequestBody.Message] = []
        var results: [ChatRequestBody.Block] = []
        func flushResults() {
            if !results.isEmpty { turns.append(ChatRequestBody.Message(role: "user", content: .blocks(results))) }
            results = []
        }
        for message in messages {
            switch message.role {
            case .system:
                continue
            case .tool:
                results.append(.toolResult(toolUseID: message.toolCallID ?? "", content: message.content,
                                           isError: message.isError))
            case .user where !results.isEmpty:
                results += ChatRequestBody.anthropicBlocks(message)
                flushResults()
            case .user where !message.images.isEmpty:
                turns.append(ChatRequestBody.Message(role: "user", content: .blocks(ChatRequestBody.anthropicBlocks(message))))
            case .user:
                turns.append(ChatRequestBody.Message(role: "user", content: message.textWithDocuments))
            case .assistant:
                flushResults()
                if message.toolCalls.isEmpty {
                    turns.append(ChatRequestBody.Message(role: "assistant", content: message.content))
                } else {
                    let text: [ChatRequestBody.Block] = message.content.isEmpty ? [] : [.text(message.content)]
                    turns.append(ChatRequestBody.Message(
                        role: "assistant", content: .blocks(text + message.toolCalls.map(ChatRequestBody.Block.toolUse))))
                }
            }
        }
        flushResults()
        return turns
    }

    /// `tool_choice`: auto → `auto`, required → `any`, a named function → `tool` with its name, none →
    /// `none`; `parallel_tool_calls: false` is `disable_parallel_tool_use: true` in it (`none` has no such
    /// field: no call, nothing to serialise). nil when the request asks for neither.
    static func toolChoice(_ options: ChatOptions) -> JSON? {
        let oneCall = options.parallelToolCalls == false
        var fields: [String: JSON]
        switch options.toolChoice ?? (oneCall ? .auto : nil) {
        case nil: return nil
        case .auto?: fields = ["type": .string("auto")]
        case .required?: fields = ["type": .string("any")]
        case .function(let name)?: fields = ["type": .string("tool"), "name": .string(name)]
        case .none?: return .object(["type": .string("none")])
        }
        if oneCall { fields["disable_parallel_tool_use"] = .bool(true) }
        return .object(fields)
    }
}
