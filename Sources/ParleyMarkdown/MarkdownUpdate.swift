/// What one `StableMarkdown.append` produced: blocks that can no longer change, each sent once,
/// and the raw Markdown still open, which replaces the previous tail.
public struct MarkdownUpdate: Sendable, Hashable, Codable {
    /// Newly committed blocks, indexes consecutive after the previously committed ones.
    public let blocks: [MarkdownBlock]
    /// The uncommitted rest of the text, raw Markdown (it replaces the previous tail).
    public let tail: String

    public init(blocks: [MarkdownBlock], tail: String) {
        self.blocks = blocks
        self.tail = tail
    }
}
