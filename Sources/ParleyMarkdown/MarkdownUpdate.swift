/// One rendered top-level block and its position among the reply's blocks (0-based).
public struct MarkdownBlock: Sendable, Hashable, Codable {
    public let index: Int
    public let html: String

    public init(index: Int, html: String) {
        self.index = index
        self.html = html
    }
}

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

/// The reconcile at the end of a reply (finish, stop, failure, interruption).
///
/// Contract: the committed blocks with `patch` applied (replace the HTML at each index), followed by
/// `blocks`, concatenated, equal `MarkdownRenderer.render(text)` byte for byte. A patch with empty
/// HTML empties a surplus committed block (the whole render has fewer blocks than were committed).
public struct MarkdownFinal: Sendable, Hashable, Codable {
    /// Committed blocks whose HTML the whole render changed (a definition came after its use).
    public let patch: [MarkdownBlock]
    /// The blocks after the committed ones (including the footnotes section), indexes consecutive.
    public let blocks: [MarkdownBlock]
    /// Committed plus final blocks.
    public let blockCount: Int

    public init(patch: [MarkdownBlock], blocks: [MarkdownBlock], blockCount: Int) {
        self.patch = patch
        self.blocks = blocks
        self.blockCount = blockCount
    }
}
