import ParleyProviders
import ParleyStore

/// Builds what is sent upstream: the system prompt, then the branch root-to-leaf, trimmed from the
/// oldest turns so the history fits `budget` characters (the newest user turn is always kept). A reply
/// with tool calls is its rounds (`ToolTurns`): text and calls, then each result; the budget counts
/// arguments and results too, and a call is never sent without its result.
struct ContextBuilder: Sendable {
    let budget: Int

    func messages(systemPrompt: String?, branch: [Message]) -> [ChatMessage] {
        var turns: [ChatMessage] = branch.flatMap { message -> [ChatMessage] in
            switch message.role {
            case .assistant where !message.toolCalls.isEmpty:
                return ToolTurns.messages(from: message.parts, messageID: message.id)
            case _ where message.content.isEmpty: return []
            case .user: return [ChatMessage(role: .user, content: message.content)]
            case .assistant: return [ChatMessage(role: .assistant, content: message.content)]
            case .system: return [ChatMessage(role: .system, content: message.content)]
            }
        }
        var size = turns.reduce(0) { $0 + Self.size(of: $1) }
        while turns.count > 1, size > budget {
            size -= Self.size(of: turns.removeFirst())
        }
        // A history must not start with an assistant turn (Anthropic refuses it), nor with a tool result
        // whose call was trimmed away.
        while turns.count > 1, turns.first?.role == .assistant || turns.first?.role == .tool {
            turns.removeFirst()
        }
        if let systemPrompt, !systemPrompt.isEmpty {
            turns.insert(ChatMessage(role: .system, content: systemPrompt), at: 0)
        }
        return turns
    }

    /// What a turn costs of the budget: its text, and its calls' names and arguments.
    static func size(of turn: ChatMessage) -> Int {
        turn.toolCalls.reduce(turn.content.count) { $0 + $1.name.count + $1.arguments.count }
    }
}
