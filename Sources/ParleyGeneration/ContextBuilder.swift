import ParleyProviders
import ParleyStore

/// Builds what is sent upstream: the system prompt, then the branch root-to-leaf, trimmed from the
/// oldest turns so the history fits `budget` characters (the newest user turn is always kept).
struct ContextBuilder: Sendable {
    let budget: Int

    func messages(systemPrompt: String?, branch: [Message]) -> [ChatMessage] {
        var turns: [ChatMessage] = branch.compactMap { message in
            guard !message.content.isEmpty else { return nil }
            switch message.role {
            case .user: return ChatMessage(role: .user, content: message.content)
            case .assistant: return ChatMessage(role: .assistant, content: message.content)
            case .system: return ChatMessage(role: .system, content: message.content)
            }
        }
        var size = turns.reduce(0) { $0 + $1.content.count }
        while turns.count > 1, size > budget {
            size -= turns.removeFirst().content.count
        }
        // A history must not start with an assistant turn (Anthropic refuses it).
        while turns.count > 1, turns.first?.role == .assistant {
            turns.removeFirst()
        }
        if let systemPrompt, !systemPrompt.isEmpty {
            turns.insert(ChatMessage(role: .system, content: systemPrompt), at: 0)
        }
        return turns
    }
}
