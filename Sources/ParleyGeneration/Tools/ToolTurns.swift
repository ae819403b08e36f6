import ParleyProviders
import ParleyStore

/// A reply's parts as the turns a model reads: each round's text and tool calls as one assistant turn,
/// then one tool turn per call with its result, in call order; trailing text as a last assistant turn.
/// Reasoning is never sent back. Used for earlier replies (`ContextBuilder`) and for the rounds of the
/// reply being generated.
enum ToolTurns {
    /// What the model is told for a call that has no result (a stop or a crash cut it).
    static let cancelledText = "The user cancelled this tool call before it finished."

    /// - Parameter messageID: makes the call ids sent upstream unique across the whole history
    ///   (Parley's call ids are unique within a message; providers may repeat theirs).
    static func messages(from parts: [MessagePart], messageID: String) -> [ChatMessage] {
        var turns: [ChatMessage] = []
        var text: [String] = []
        var calls: [ToolCallPart] = []
        func flush() {
            guard !text.isEmpty || !calls.isEmpty else { return }
            let content = text.joined(separator: "\n\n")
            turns.append(ChatMessage(role: .assistant, content: content, toolCalls: calls.map {
                ChatToolCall(id: upstreamID($0, messageID: messageID), name: $0.name,
                             arguments: $0.arguments?.text ?? $0.argumentsText)
            }))
            for call in calls {
                let answer = result(of: call)
                turns.append(.toolResult(id: upstreamID(call, messageID: messageID),
                                         content: answer.text, isError: answer.isError))
            }
            text = []
            calls = []
        }
        for part in parts {
            switch part {
            case .text(let piece, _):
                if !calls.isEmpty { flush() }
                if !piece.isEmpty { text.append(piece) }
            case .reasoning, .surface, .action:
                // A surface reaches the model as its render_ui call and result; an action is a user turn's.
                break
            case .toolCall(let call):
                calls.append(call)
            }
        }
        flush()
        return turns
    }

    /// The id a call has upstream: the message's id and Parley's call id.
    static func upstreamID(_ call: ToolCallPart, messageID: String) -> String {
        "\(messageID)_\(call.id)"
    }

    /// What the model reads for a call: its result, or why it has none.
    static func result(of call: ToolCallPart) -> (text: String, isError: Bool) {
        if let result = call.result { return (ToolResultLimit.modelText(result), result.isError) }
        switch call.status {
        case .cancelled, .streaming, .running, .awaitingApproval: return (cancelledText, true)
        case .denied: return (ToolResultLimit.modelText(Store.deniedResult), true)
        case .error, .complete: return ("The tool call gave no result.", call.status == .error)
        }
    }
}
