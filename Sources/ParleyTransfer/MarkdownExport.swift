import ParleyStore

/// The current branch of a conversation as a Markdown document, for reading and sharing: the title
/// as a heading, then each message under its role (and model), its reasoning quoted, a note for a
/// reply that did not complete. Message text is written as it is (it is Markdown already).
enum MarkdownExport {
    static func document(_ conversation: Conversation, branch: [Message]) -> String {
        var out = "# \(conversation.title)\n"
        if let prompt = conversation.systemPrompt, !prompt.isEmpty {
            out += "\n" + quoted(prompt, heading: "System prompt")
        }
        for message in branch {
            out += "\n---\n\n"
            switch message.role {
            case .user: out += "## User\n\n"
            case .assistant: out += "## Assistant" + (message.model.map { " (\($0))" } ?? "") + "\n\n"
            case .system: out += "## System\n\n"
            }
            if !message.reasoning.isEmpty {
                out += quoted(message.reasoning, heading: "Reasoning") + "\n"
            }
            out += message.content
            if !message.content.hasSuffix("\n") { out += "\n" }
            if message.status != .complete {
                let why = message.errorMessage.map { ": \($0)" } ?? ""
                out += "\n_(\(message.status.rawValue)\(why))_\n"
            }
        }
        return out
    }

    /// `text` as a block quote under an emphasised heading, every line prefixed.
    private static func quoted(_ text: String, heading: String) -> String {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map { $0.isEmpty ? ">" : "> \($0)" }
        return "> _\(heading)_\n>\n" + lines.joined(separator: "\n") + "\n"
    }
}
