/// One rendered top-level block and its position among the reply's blocks (0-based).
public struct MarkdownBlock: Sendable, Hashable, Codable {
    public let index: Int
    public let html: String

    public init(index: Int, html: String) {
        self.index = index
        self.html = html
    }
}
