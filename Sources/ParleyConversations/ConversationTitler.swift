import Foundation
import ParleyEvents
import ParleyGeneration
import ParleyProviders
import ParleyStore

/// Names a conversation after its first answer, so the list does not fill with "New conversation".
///
/// The title comes from the conversation's model: one small request (a few words asked for, at
/// most `maxTokens` tokens, read within `timeout`) made after the reply has finished, on a task of
/// its own, so it never holds up or slows the chat. The demo model, a failed or empty request, and a
/// reply that failed all give the first words of the question instead. A title set by hand is never
/// replaced (`Store.setGeneratedTitle`), and every tab of the user is told (`conversation_updated`).
package struct ConversationTitler: Sendable {
    let store: Store
    let generations: Generations
    let providers: ProviderRegistry
    let feed: UserEventFeed
    /// Longest title kept, in characters (at most PARLEY_MAX_TITLE_CHARS).
    let maxCharacters: Int
    let source: TitleSource
    var maxTokens = 24
    var timeout: Duration = .seconds(30)
    /// The naming in progress, so a test can wait for it to end instead of sleeping.
    package let jobs = TitleJobs()

    package init(store: Store, generations: Generations, providers: ProviderRegistry, feed: UserEventFeed, maxCharacters: Int, source: TitleSource, timeout: Duration = .seconds(30)) {
        self.store = store
        self.generations = generations
        self.providers = providers
        self.feed = feed
        self.maxCharacters = maxCharacters
        self.source = source
        self.timeout = timeout
    }

    static let instruction = """
        Write a title for this conversation: at most six words, in the language of the question. \
        Answer with the title only, without quotes or a final period.
        """

    /// Starts naming `conversation` once `reply` has finished, when this turn is its first and it still
    /// has the default title; otherwise does nothing. Returns at once.
    func nameAfterFirstReply(of conversation: Conversation, question: Message, reply: Message, model: String?) {
        guard source != .off, conversation.currentLeafID == nil, conversation.title == Store.defaultTitle else { return }
        let titler = self
        jobs.add(Task.detached(priority: .utility) {
            await titler.name(conversationID: conversation.id, question: question.content,
                              replyID: reply.id, model: model)
        })
    }

    /// Returns once every naming started so far has ended (a title stored, or none to store).
    func settled() async {
        await jobs.settled()
    }

    private func name(conversationID: String, question: String, replyID: String, model: String?) async {
        guard let answer = await finishedText(of: replyID) else { return }
        var title = Self.firstWords(of: question, maxCharacters: maxCharacters)
        if source == .model, !answer.isEmpty, let asked = await askModel(model, question: question, answer: answer) {
            title = asked
        }
        guard !title.isEmpty,
              let named = try? store.setGeneratedTitle(conversationID: conversationID, title: title) else { return }
        feed.conversationUpdated(named)
    }

    /// The reply's text once it has ended (empty if it ended with none), or nil if it is gone.
    private func finishedText(of replyID: String) async -> String? {
        // Throws only when the reply is gone; the read below then finds nothing.
        _ = try? await generations.outcome(of: replyID)
        guard let reply = try? store.message(id: replyID), reply.status != .streaming else { return nil }
        return reply.content
    }

    /// The model's title, cleaned, or nil (demo model, error, timeout, nothing usable).
    private func askModel(_ model: String?, question: String, answer: String) async -> String? {
        var modelID = model ?? ""
        if modelID.isEmpty { modelID = await providers.defaultModelID() }
        guard let resolved = providers.resolve(modelID), !(resolved.provider is DemoProvider) else { return nil }
        let excerpt = String(answer.prefix(1500))
        let request = ChatRequest(model: resolved.model, messages: [
            ChatMessage(role: .system, content: Self.instruction),
            ChatMessage(role: .user, content: "Question:\n\(String(question.prefix(1500)))\n\nAnswer:\n\(excerpt)"),
        ], maxTokens: maxTokens, temperature: 0.2)
        let limit = timeout
        let text = await withTaskGroup(of: String?.self) { group in
            group.addTask {
                var text = ""
                do {
                    for try await event in resolved.provider.stream(request) {
                        if case .text(let piece) = event { text += piece }
                        if text.count > 400 { break }
                    }
                } catch {
                    return nil
                }
                return text
            }
            group.addTask {
                try? await Task.sleep(for: limit)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        guard let text else { return nil }
        let title = Self.clean(text, maxCharacters: maxCharacters)
        return title.isEmpty ? nil : title
    }

    // MARK: - Text

    /// A model's answer as a title: its first non-empty line, without Markdown emphasis, heading
    /// marks, surrounding quotes, a "Title:" label or a final period, spaces collapsed, cut at a word.
    static func clean(_ text: String, maxCharacters: Int) -> String {
        var line = text.split(whereSeparator: \.isNewline)
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .first { !$0.isEmpty } ?? ""
        line = line.replacingOccurrences(of: "**", with: "")
        while line.hasPrefix("#") { line.removeFirst() }
        line = line.trimmingCharacters(in: .whitespaces)
        if line.lowercased().hasPrefix("title:") { line = String(line.dropFirst(6)) }
        let quotes: Set<Character> = ["\"", "'", "“", "”", "«", "»", "`", "*", "_"]
        line = line.trimmingCharacters(in: .whitespaces)
        while let first = line.first, quotes.contains(first) { line.removeFirst() }
        while let last = line.last, quotes.contains(last) || last == "." { line.removeLast() }
        return cut(line.split(whereSeparator: \.isWhitespace).joined(separator: " "), maxCharacters: maxCharacters)
    }

    /// The first words of a question (at most six), as the fallback title.
    static func firstWords(of question: String, maxCharacters: Int) -> String {
        let words = question.split(whereSeparator: \.isWhitespace).prefix(6)
        var title = words.joined(separator: " ")
        while let last = title.last, [".", ",", ":", ";", "?", "!"].contains(last), title.count > 1 {
            title.removeLast()
        }
        return cut(title, maxCharacters: maxCharacters)
    }

    /// `text` cut to `maxCharacters` characters and 3 bytes of UTF-8 per character (so a grapheme
    /// cluster of thousands of combining marks cannot make a huge title: `BoundedText`), at the last
    /// space when there is one in the second half.
    static func cut(_ text: String, maxCharacters: Int) -> String {
        let head = BoundedText.prefix(text, characters: maxCharacters, bytes: 3 * maxCharacters)
        guard head.cut else { return head.text }
        let kept = head.text
        if let space = kept.lastIndex(of: " "), kept.distance(from: kept.startIndex, to: space) > maxCharacters / 2 {
            return String(kept[..<space])
        }
        return kept
    }
}
