/// When `StableMarkdown` parses a long open block again. Parsing the open block on every new line
/// costs O(n²) for one long block; parsing it again only after it grew by a fixed fraction costs
/// O(n) (a geometric sum: 1/4 growth re-parses at most 5× its size in all).
///
/// An open fenced code block is never re-parsed (only a closing fence line ends it, and new lines
/// are scanned for one); this policy covers every other block: lists, tables, quotes, long
/// paragraphs, HTML blocks.
public struct ReparsePolicy: Sendable, Hashable {
    /// An uncommitted region up to this size (UTF-8 bytes) is parsed on every new line, so short
    /// blocks (most prose) are committed as soon as they close.
    public var smallRegionBytes: Int
    /// A larger region is parsed again once it has grown by this fraction since its last parse...
    public var growth: Double
    /// ...or once this long has passed since its last parse, so the block after a long list is
    /// committed within this delay at a model's pace. Long enough that a fast stream is paced by
    /// `growth` alone.
    public var interval: Duration

    public init(smallRegionBytes: Int = 1024, growth: Double = 0.25, interval: Duration = .seconds(1)) {
        self.smallRegionBytes = smallRegionBytes
        self.growth = growth
        self.interval = interval
    }

    /// Parse on every new complete line, whatever the size (the behaviour before issue 11; for tests).
    public static let everyLine = ReparsePolicy(smallRegionBytes: .max, growth: 0, interval: .zero)

    /// Whether a region of `size` bytes, last parsed at `parsedSize` bytes `elapsed` ago, is parsed now.
    func shouldParse(size: Int, parsedSize: Int, elapsed: Duration) -> Bool {
        size <= smallRegionBytes || Double(size) >= Double(parsedSize) * (1 + growth) || elapsed >= interval
    }
}
