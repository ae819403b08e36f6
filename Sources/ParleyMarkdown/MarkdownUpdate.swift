/// What one `StableMarkdown.append` produced: blocks that can no longer change, each sent once,
/// and what happened to the raw Markdown still open (the tail).
public struct MarkdownUpdate: Sendable, Hashable, Codable {
    /// Newly committed blocks, indexes consecutive after the previously committed ones.
    public let blocks: [MarkdownBlock]
    /// How the uncommitted rest of the text changed; `StableMarkdown.tail` is the whole of it.
    public let tail: TailChange

    public init(blocks: [MarkdownBlock], tail: TailChange) {
        self.blocks = blocks
        self.tail = tail
    }
}
