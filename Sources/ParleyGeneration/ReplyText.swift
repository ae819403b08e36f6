import ParleyMarkdown
import ParleyStore

/// The text of one reply while it streams: the answer (held once, in its Markdown state), the
/// reasoning, the piece gathered for the next frame, the byte budget of this run, and how much of
/// it is stored. A value type with no clock and no I/O, so every rule here is tested without a server.
struct ReplyText: Sendable {
    /// Which of the two texts a piece belongs to.
    enum Part: Sendable {
        case answer
        case reasoning
    }

    /// What one frame sends, in order: reasoning, then the blocks the answer closed, what happened
    /// to the raw tail (replaced, or appended to: `tail` or `tail_append`), the answer text
    /// itself (the `delta` of text mode), and the tail's provisional HTML (`tail_html`, html mode).
    struct Frame: Sendable, Equatable {
        var reasoning: String?
        var blocks: [MarkdownBlock] = []
        var tail: TailChange = .unchanged
        var answer: String?
        var tailHTML: ProvisionalTail.Change = .unchanged
    }

    /// The answer sent so far, rendered as it arrives; its `text` is the answer (no other copy).
    private(set) var markdown: StableMarkdown
    /// The open tail's provisional HTML (never part of the committed blocks).
    private(set) var provisional = ProvisionalTail()
    /// Reasoning sent so far (plain text, no Markdown).
    private(set) var reasoning: String
    /// Answer and reasoning received but not yet sent: gathered until the end of the current frame.
    private var pending = ""
    private var pendingReasoning = ""
    /// Bytes this run may still add before the reply is cut (`maxReplyBytes` per run, so a reply cut
    /// for length can be continued). Reasoning shares it: a model that only thinks is cut too.
    private var room: Int
    /// Bytes of answer and reasoning over the message's life: what progress flushes track.
    private(set) var receivedBytes: Int
    private var storedBytes: Int
    private let renderer: MarkdownRenderer

    /// - Parameters:
    ///   - content, reasoning: what the message already holds (non-empty when continuing).
    ///   - room: bytes this run may add.
    init(content: String, reasoning: String, renderer: MarkdownRenderer, room: Int) {
        var markdown = StableMarkdown(renderer: renderer)
        if !content.isEmpty { _ = markdown.append(content) }
        _ = provisional.update(markdown, tailMoved: true)
        self.markdown = markdown
        self.reasoning = reasoning
        self.renderer = renderer
        self.room = room
        receivedBytes = content.utf8.count + reasoning.utf8.count
        storedBytes = receivedBytes
    }

    /// The answer sent so far.
    var answer: String { markdown.text }

    /// Bytes this run may still add (what the next text part of the reply starts with).
    var remainingRoom: Int { room }

    /// Spends `bytes` of the run's budget on something other than text (a tool call's arguments);
    /// false when they do not fit.
    mutating func spend(_ bytes: Int) -> Bool {
        guard bytes <= room else { return false }
        room -= bytes
        return true
    }

    /// Whether a frame has anything to send.
    var hasPending: Bool { !pending.isEmpty || !pendingReasoning.isEmpty }

    /// Adds received text to the next frame, cut at the run's budget on a character boundary.
    /// Returns false when it was cut: the reply must end there (`length`).
    mutating func receive(_ text: String, as part: Part) -> Bool {
        let fits = text.utf8.count <= room
        let accepted = fits ? Substring(text) : text.prefix(utf8Bytes: room)
        switch part {
        case .answer: pending += accepted
        case .reasoning: pendingReasoning += accepted
        }
        receivedBytes += accepted.utf8.count
        room -= accepted.utf8.count
        return fits
    }

    /// Moves the gathered text into the sent state and says what the frame carries; nil when
    /// nothing was gathered.
    mutating func takeFrame() -> Frame? {
        guard hasPending else { return nil }
        var frame = Frame()
        if !pendingReasoning.isEmpty {
            reasoning += pendingReasoning
            frame.reasoning = pendingReasoning
            pendingReasoning = ""
        }
        if !pending.isEmpty {
            let text = pending
            pending = ""
            let update = markdown.append(text)
            frame.blocks = update.blocks
            frame.tail = update.tail
            frame.answer = text
            frame.tailHTML = provisional.update(markdown, tailMoved: !update.blocks.isEmpty)
        }
        return frame
    }

    /// Whether a change of the visible tail waits for its provisional render (over the render budget).
    var owesTailHTML: Bool { provisional.isOwed }

    /// The provisional render the budget held back (`.unchanged` when none is owed).
    mutating func renderOwedTailHTML() -> ProvisionalTail.Change {
        provisional.renderOwed(markdown)
    }

    /// Ends the Markdown: the blocks still open and the patch for committed ones a late definition
    /// changed. Call after the last `takeFrame`.
    mutating func finish() -> MarkdownFinal {
        let final = markdown.finish()
        _ = provisional.update(markdown, tailMoved: true)
        return final
    }

    /// Closes this text part (a tool call follows it): its final render, text and reasoning. The next part
    /// starts empty with what is left of the budget; byte counts go on, so progress tracking is unbroken.
    /// Call after the last `takeFrame`.
    mutating func closePart() -> (final: MarkdownFinal, text: String, reasoning: String, blocks: [String]) {
        let final = markdown.finish()
        let closed = (final, markdown.text, reasoning, markdown.blocks)
        markdown = StableMarkdown(renderer: renderer)
        provisional = ProvisionalTail()
        _ = provisional.update(markdown, tailMoved: true)
        reasoning = ""
        return closed
    }

    // MARK: - Persistence

    /// The whole answer and reasoning, gathered text included, when they grew since the last
    /// confirmed write; `bytes` is what `confirmStored` takes once that write committed.
    func unstoredProgress() -> (content: String, reasoning: String, bytes: Int)? {
        guard receivedBytes != storedBytes else { return nil }
        return (markdown.text + pending, reasoning + pendingReasoning, receivedBytes)
    }

    /// Records that the text up to `bytes` is stored.
    mutating func confirmStored(_ bytes: Int) {
        storedBytes = max(storedBytes, bytes)
    }
}

extension String {
    /// The longest prefix of at most `maxBytes` UTF-8 bytes that ends on a character boundary.
    func prefix(utf8Bytes maxBytes: Int) -> Substring {
        var end = startIndex
        var used = 0
        for index in indices {
            let next = self.index(after: index)
            used += utf8.distance(from: index, to: next)
            if used > maxBytes { break }
            end = next
        }
        return self[..<end]
    }
}
