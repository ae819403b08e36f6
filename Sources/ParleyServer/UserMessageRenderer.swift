import ParleyMarkdown
import ParleyStore

/// The HTML a message shows in history: stored for finished assistant messages, rendered with the
/// same safe renderer for user messages (which carry no stored HTML), none while streaming.
struct UserMessageRenderer: Sendable {
    let renderer: MarkdownRenderer

    func html(for message: Message) -> String? {
        if message.status == .streaming { return nil }
        if let html = message.html { return html }
        return message.role == .user ? renderer.render(message.content) : nil
    }
}
