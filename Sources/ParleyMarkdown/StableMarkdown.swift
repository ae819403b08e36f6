/// Streams a Markdown reply as HTML: each top-level block is sent once, as soon as no later text can
/// change it, the still-open rest is sent raw, and `finish()` reconciles the rare block that a later
/// definition changed.
///
/// Why it holds: cmark's block parser never reopens a block once a later line has started a new one,
/// so every top-level block that starts before the last one is closed. Only complete lines are parsed
/// (`> quote\n#` is a heading until the next character makes it a lazy continuation). Each parse
/// covers the uncommitted text plus a prelude of the link reference definitions already committed, so
/// the work per reply is linear in its length as long as its blocks are bounded (one huge list or
/// code block is re-parsed on each of its lines until it closes).
///
/// A definition that comes after its use (`[x]` then `[x]: /url`, footnotes defined at the end)
/// can change a committed block; `finish()` returns those as a patch.
///
/// Thread-safety: a value type; use one per reply from one task.
public struct StableMarkdown: Sendable {
    public let renderer: MarkdownRenderer

    /// The whole text so far, UTF-8.
    private var bytes: [UInt8] = []
    /// Offset of the first uncommitted byte, always at a line start.
    private var base = 0
    /// End of the last complete line (one past its "\n").
    private var complete = 0
    /// Committed text holding link reference or footnote definitions, each piece followed by a
    /// separator that closes every container; parsed before the uncommitted text.
    private var prelude: [UInt8] = []
    private var preludeLines = 0
    /// The HTML of the committed blocks (after `finish()`: of all blocks, patched).
    public private(set) var blocks: [String] = []
    private var final: MarkdownFinal?

    /// Ends each definition-holding piece of the prelude; its paragraph is never output.
    static let preludeSeparator = Array("\n\nparley-prelude-end\n\n".utf8)

    public init(renderer: MarkdownRenderer = MarkdownRenderer()) {
        self.renderer = renderer
    }

    /// The raw uncommitted Markdown (empty after `finish()`).
    public var tail: String {
        final == nil ? String(decoding: bytes[base...], as: UTF8.self) : ""
    }

    /// All text appended so far.
    public var text: String { String(decoding: bytes, as: UTF8.self) }

    /// Bytes handed to cmark by appends so far (prelude included): the measure of the linear cost.
    private(set) var parsedByteCount = 0

    /// Size of the definition prelude re-parsed before the uncommitted text (for tests and metrics).
    var preludeByteCount: Int { prelude.count }

    /// Whether `finish()` has run; later appends are ignored.
    public var isFinished: Bool { final != nil }

    // MARK: - Streaming

    /// Adds a piece of the reply; returns the blocks it closed and the new raw tail.
    public mutating func append(_ piece: String) -> MarkdownUpdate {
        guard final == nil else { return MarkdownUpdate(blocks: [], tail: "") }
        let start = bytes.count
        bytes.append(contentsOf: piece.utf8)
        var committed: [MarkdownBlock] = []
        // Only complete lines count; a trailing "\r" may be half of "\r\n".
        if let newline = bytes[start...].lastIndex(of: UInt8(ascii: "\n")) {
            complete = newline + 1
            committed = commitClosedBlocks()
        }
        return MarkdownUpdate(blocks: committed, tail: tail)
    }

    /// Renders the whole text once and reconciles it with the committed blocks (see `MarkdownFinal`).
    /// Idempotent: a second call returns the same result.
    public mutating func finish() -> MarkdownFinal {
        if let final { return final }
        let whole = renderer.renderBlocks(text)
        var patch: [MarkdownBlock] = []
        for (index, html) in blocks.enumerated() {
            // A surplus committed block (the whole render has fewer) is emptied.
            let reconciled = index < whole.count ? whole[index] : ""
            if reconciled != html { patch.append(MarkdownBlock(index: index, html: reconciled)) }
        }
        let rest = whole.indices.dropFirst(blocks.count).map { MarkdownBlock(index: $0, html: whole[$0]) }
        let result = MarkdownFinal(patch: patch, blocks: rest, blockCount: max(blocks.count, whole.count))
        for block in patch { blocks[block.index] = block.html }
        blocks.append(contentsOf: rest.map(\.html))
        base = bytes.count
        final = result
        return result
    }

    // MARK: - Committing

    /// One top-level block of the uncommitted text, lines relative to it (1-based).
    private struct Candidate {
        let block: MarkdownBlockNode
        /// The start line used to decide closure (a paragraph split off by a table has none and
        /// takes the next block's).
        let start: Int
        /// The start line cmark reported, nil when unknown.
        let reportedStart: Int?
        /// The end line, nil when cmark's is unusable.
        let end: Int?
    }

    private mutating func commitClosedBlocks() -> [MarkdownBlock] {
        let region = bytes[base..<complete]
        let lines = LineIndex(region)
        var source = prelude
        source.append(contentsOf: region)
        parsedByteCount += source.count
        let preludeLines = self.preludeLines
        let firstIndex = blocks.count

        let outcome: (html: [String], cutLine: Int, segments: [Range<Int>])? = renderer.withDocument(source) { document in
            let nodes = document.topLevelBlocks().filter { $0.kind != .footnoteDefinition }
            var candidates: [Candidate] = []
            for (position, node) in nodes.enumerated() {
                var start = node.startLine
                if start == 0 {
                    start = nodes[(position + 1)...].first { $0.startLine > 0 }?.startLine ?? (preludeLines + lines.count + 1)
                }
                guard start > preludeLines else { continue }
                let end = node.endLine >= max(node.startLine, 1) ? node.endLine - preludeLines : nil
                candidates.append(Candidate(
                    block: node, start: start - preludeLines,
                    reportedStart: node.startLine > 0 ? node.startLine - preludeLines : nil, end: end))
            }
            guard let last = candidates.last else { return nil }

            var count = candidates.prefix { $0.start < last.start }.count
            if count == candidates.count - 1, isProvablyClosed(last, document: document, lines: lines) {
                count = candidates.count
            }
            // Where the uncommitted text starts: the first uncommitted block's line, or right after the
            // last committed block when that line is unknown.
            var cutLine: Int?
            while count > 0, cutLine == nil {
                if count < candidates.count, let start = candidates[count].reportedStart {
                    cutLine = start
                } else if let end = candidates[count - 1].end {
                    cutLine = end + 1
                } else {
                    count -= 1
                }
            }
            guard let cutLine, count > 0, cutLine > 1, cutLine <= lines.count + 1 else { return nil }

            let committed = candidates.prefix(count)
            let html = committed.map { document.html(of: $0.block.node) }
            // Each committed block owns its lines up to the next block's start (gaps included).
            var segments: [Range<Int>] = []
            var segmentStart = 1
            for next in committed.dropFirst() {
                if let start = next.reportedStart, start > segmentStart, start <= cutLine {
                    segments.append(segmentStart..<start)
                    segmentStart = start
                }
            }
            segments.append(segmentStart..<cutLine)
            return (html, cutLine, segments)
        }
        guard let outcome else { return [] }

        let definitionSegments = outcome.segments.filter { lines.containsDefinition($0) }
        if !definitionSegments.isEmpty {
            for segment in definitionSegments {
                prelude.append(contentsOf: region[lines.byteRange(segment)])
                prelude.append(contentsOf: Self.preludeSeparator)
            }
            self.preludeLines = LineIndex(prelude[...]).count
        }
        base += lines.offset(ofLine: outcome.cutLine)
        blocks.append(contentsOf: outcome.html)
        return outcome.html.enumerated().map { MarkdownBlock(index: firstIndex + $0.offset, html: $0.element) }
    }

    /// Whether the last block can no longer change: a heading, a thematic break, a fenced code block
    /// closed by its fence, or a paragraph, table or block quote followed by a blank line. A block
    /// whose HTML still holds "[" may be a reference a later definition resolves, so it waits
    /// (code blocks excepted: their text is literal).
    private func isProvablyClosed(_ candidate: Candidate, document: ParsedMarkdown, lines: LineIndex) -> Bool {
        guard let end = candidate.end, candidate.reportedStart != nil, end <= lines.count else { return false }
        switch candidate.block.kind {
        case .thematicBreak:
            return true
        case .codeBlock:
            guard let fence = candidate.block.fence, end > candidate.start else { return false }
            return lines.isClosingFence(line: end, character: fence.character, length: fence.length)
        case .heading:
            return !document.html(of: candidate.block.node).utf8.contains(UInt8(ascii: "["))
        case .paragraph, .table, .blockQuote:
            guard end + 1 <= lines.count, lines.isBlank(line: end + 1) else { return false }
            return !document.html(of: candidate.block.node).utf8.contains(UInt8(ascii: "["))
        default:
            return false
        }
    }
}
