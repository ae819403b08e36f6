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
