import ParleyProviders
import ParleyStore

/// Builds what is sent upstream: the system prompt, then the branch root-to-leaf, trimmed from the
/// oldest turns so the history fits `budget` characters (the newest user turn is always kept). A reply
/// with tool calls is its rounds (`ToolTurns`): text and calls, then each result; the budget counts
/// arguments and results too, and a call is never sent without its result.
///
/// Files (`AttachmentSource`) count too: a document its wrapped text, an image a fixed estimate
/// (`AttachmentSummary.characters`). A whole document goes in when it fits, never a cut one. When the
/// newest user turn alone is over the budget, its files go in, in order, while they fit. Whatever file
/// is left out, the first user turn sent starts with a note naming it (`LeftOutFiles`): the model
/// knows what it does not see, nothing is cut silently. Only the turns sent have their files loaded.
struct ContextBuilder: Sendable {
    let budget: Int
    let files: any AttachmentSource

    init(budget: Int, files: any AttachmentSource = NoAttachments()) {
        self.budget = budget
        self.files = files
    }

    /// One turn as sent, the message it comes from, the files that message carries and the positions
    /// of those left out of it.
    private struct Turn {
        var message: ChatMessage
        let origin: Message
        let files: [AttachmentSummary]
        var omitted: Set<Int> = []

        init(message: ChatMessage, origin: Message, files: [AttachmentSummary] = []) {
            self.message = message
            self.origin = origin
            self.files = files
        }

        /// The turn of a stored message's text.
        init(_ role: ChatMessage.Role, _ origin: Message, files: [AttachmentSummary] = []) {
            self.init(message: ChatMessage(role: role, content: origin.content), origin: origin, files: files)
        }

        var size: Int {
            files.indices.reduce(ContextBuilder.size(of: message)) {
                omitted.contains($1) ? $0 : $0 + files[$1].characters
            }
        }
    }

    func messages(systemPrompt: String?, branch: [Message]) throws -> [ChatMessage] {
        var turns: [Turn] = try branch.flatMap { message -> [Turn] in
            switch message.role {
            case .assistant where !message.toolCalls.isEmpty:
                return ToolTurns.messages(from: message.parts, messageID: message.id)
                    .map { Turn(message: $0, origin: message) }
            case .user:
                let summaries = try files.summaries(for: message)
                guard !message.content.isEmpty || !summaries.isEmpty else { return [] }
                return [Turn(.user, message, files: summaries)]
            case _ where message.content.isEmpty: return []
            case .assistant: return [Turn(.assistant, message)]
            case .system: return [Turn(.system, message)]
            }
        }
        var leftOut = LeftOutFiles()
        var size = turns.reduce(0) { $0 + $1.size }
        while turns.count > 1, size > budget {
            let dropped = turns.removeFirst()
            size -= dropped.size
            leftOut.dropped(dropped.files)
        }
        // A history must not start with an assistant turn (Anthropic refuses it), nor with a tool result
        // whose call was trimmed away.
        while turns.count > 1, turns.first?.message.role == .assistant || turns.first?.message.role == .tool {
            leftOut.dropped(turns.removeFirst().files)
        }
        if turns.count == 1, size > budget, !turns[0].files.isEmpty {
            size = fitFiles(of: &turns[0], leftOut: &leftOut)
        }
        var messages = try turns.map { turn -> ChatMessage in
            guard turn.files.count > turn.omitted.count else { return turn.message }
            var message = turn.message
            message.attachments = try files.attachments(for: turn.origin).enumerated()
                .filter { !turn.omitted.contains($0.offset) }.map(\.element)
            return message
        }
        if let note = leftOut.note {
            if let first = messages.firstIndex(where: { $0.role == .user }) {
                let text = messages[first].content
                messages[first].content = text.isEmpty ? note : note + "\n\n" + text
            } else {
                messages.insert(ChatMessage(role: .user, content: note), at: 0)
            }
        }
        if let systemPrompt, !systemPrompt.isEmpty {
            messages.insert(ChatMessage(role: .system, content: systemPrompt), at: 0)
        }
        return messages
    }

    /// The newest user turn alone is over the budget: its files are kept in order while they fit
    /// beside its text (a later small one may fit where a large one did not); the rest are left out.
    /// Returns the turn's size after.
    private func fitFiles(of turn: inout Turn, leftOut: inout LeftOutFiles) -> Int {
        var size = Self.size(of: turn.message)
        for (index, file) in turn.files.enumerated() {
            if size + file.characters <= budget {
                size += file.characters
            } else {
                turn.omitted.insert(index)
                leftOut.cut(file)
            }
        }
        return size
    }

    /// What a turn costs of the budget: its text, and its calls' names and arguments.
    static func size(of turn: ChatMessage) -> Int {
        turn.toolCalls.reduce(turn.content.count) { $0 + $1.name.count + $1.arguments.count }
    }
}
