/// Streams a Markdown reply as HTML: each top-level block is sent once, as soon as no later text can
/// change it, the still-open rest is sent raw (as appends while it only grows), and `finish()`
/// reconciles the rare block that a later definition changed.
///
/// Why it holds: cmark's block parser never reopens a block once a later line has started a new one,
/// so every top-level block that starts before the last one is closed. Only complete lines are parsed
/// (`> quote\n#` is a heading until the next character makes it a lazy continuation). Each parse
/// covers the uncommitted text plus a prelude of the link reference definitions already committed.
///
/// Why it is linear: an open fenced code block is not parsed again while it streams (its content is
/// literal; new lines are only scanned for its closing fence), and any other long open block is
/// parsed again only after it grew by a fraction or a delay passed (`ReparsePolicy`). Skipping a
/// parse only delays commits: the next parse, or `finish()`, sees the same lines.
///
/// A definition that comes after its use (`[x]` then `[x]: /url`, footnotes defined at the end)
/// can change a committed block; `finish()` returns those as a patch.
///
/// Thread-safety: a value type; use one per reply from one task.
///
/// The ParleyMarkdown module turns Markdown text into safe HTML, whole (`MarkdownRenderer`) or as it
/// streams (this type), and is the only module that touches cmark-gfm. It must never know replies,
/// providers, the store, SSE or HTTP: it sees text and gives HTML.
public struct StableMarkdown: Sendable {
    public let renderer: MarkdownRenderer
    /// When a long open block other than a code fence is parsed again.
    public let policy: ReparsePolicy

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
    /// What the last parse found the open (last, uncommitted) block to be.
    private var open: OpenBlock = .unknown
    /// Whether the parse under way was triggered by a line unlike the open block (see `OpenBlock`).
    private var triggeredByLine = false

    /// Decides whether a new complete line needs a parse.
    private enum OpenBlock {
        /// Parse on the next complete line.
        case unknown
        /// A top-level fenced code block without its closing fence: only a line of at least `length`
        /// `character`s (up to three spaces before, only spaces and tabs after) can end it. Lines
        /// before `scanned` (a byte offset) hold none.
        case fence(character: UInt8, length: Int, scanned: Int)
        /// Another block, last parsed when the uncommitted region had `parsedSize` bytes; lines before
        /// `scanned` were looked at. `opener` is the class of the region's first character (see
        /// `LineIndex.startsNewKindOfBlock`); `afterBlank` says whether the last scanned line was blank.
        /// `armed`: whether such a line may trigger a parse (not again after one that committed
        /// nothing, until the next growth: an HTML `<pre>` block goes on across blank lines).
        case growing(parsedSize: Int, at: ContinuousClock.Instant, scanned: Int, opener: UInt8, afterBlank: Bool,
                     armed: Bool)
    }

    /// Ends each definition-holding piece of the prelude; its paragraph is never output.
    static let preludeSeparator = Array("\n\nparley-prelude-end\n\n".utf8)

    public init(renderer: MarkdownRenderer = MarkdownRenderer(), policy: ReparsePolicy = ReparsePolicy()) {
        self.renderer = renderer
        self.policy = policy
    }

    /// The raw uncommitted Markdown (empty after `finish()`).
    public var tail: String {
        final == nil ? String(decoding: bytes[base...], as: UTF8.self) : ""
    }

    /// All text appended so far.
    public var text: String { String(decoding: bytes, as: UTF8.self) }

    /// UTF-8 bytes appended so far.
    public var byteCount: Int { bytes.count }

    /// Bytes handed to cmark by appends so far (prelude included): the measure of the linear cost.
    private(set) var parsedByteCount = 0

    /// Size of the definition prelude re-parsed before the uncommitted text (for tests and metrics).
    var preludeByteCount: Int { prelude.count }

    /// Whether `finish()` has run; later appends are ignored.
    public var isFinished: Bool { final != nil }

    // MARK: - Streaming

    /// Adds a piece of the reply; returns the blocks it closed and what happened to the raw tail.
    public mutating func append(_ piece: String) -> MarkdownUpdate {
        guard final == nil, !piece.isEmpty else { return MarkdownUpdate(blocks: [], tail: .unchanged) }
        let start = bytes.count
        let previousBase = base
        bytes.append(contentsOf: piece.utf8)
        var committed: [MarkdownBlock] = []
        // Only complete lines count; a trailing "\r" may be half of "\r\n".
        if let newline = bytes[start...].lastIndex(of: UInt8(ascii: "\n")) {
            complete = newline + 1
            if needsParse() { committed = commitClosedBlocks() }
        }
        // Committing moves the tail's start; otherwise the tail grew by exactly the piece.
        return MarkdownUpdate(blocks: committed, tail: base == previousBase ? .appended(piece) : .replaced(tail))
    }

    /// Whether the lines completed since the last parse may have closed the open block or grown it
    /// enough to parse it again.
    private mutating func needsParse() -> Bool {
        switch open {
        case .unknown:
            return true
        case .fence(let character, let length, let scanned):
            if LineIndex.containsClosingFence(bytes[scanned..<complete], character: character, length: length) {
                return true
            }
            open = .fence(character: character, length: length, scanned: complete)
            return false
        case .growing(let parsedSize, let at, let scanned, let opener, var afterBlank, let armed):
            triggeredByLine = false
            if policy.shouldParse(size: complete - base, parsedSize: parsedSize, elapsed: .now - at) { return true }
            // A line unlike the block's own after a blank line most likely starts the next block
            // (`After` below a list, anything below a table): parse now rather than after more growth.
            let lines = LineIndex(bytes[scanned..<complete])
            for line in 1..<(lines.count + 1) {
                if armed, afterBlank, lines.startsNewKindOfBlock(line: line, unlike: opener) {
                    triggeredByLine = true
                    return true
                }
                afterBlank = lines.isBlank(line: line)
            }
            open = .growing(parsedSize: parsedSize, at: at, scanned: complete, opener: opener, afterBlank: afterBlank,
                            armed: armed)
            return false
        }
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

    // MARK: - Provisional render (issue 18)

    /// Whether the open block is a top-level fenced code block still waiting for its closing fence: its
    /// lines stream as `tail_append` and are shown as code, never rendered provisionally.
    public var isInOpenFence: Bool {
        if case .fence = open { return true }
        return false
    }

    /// The uncommitted bytes (empty after `finish()`).
    var tailBytes: ArraySlice<UInt8> { final == nil ? bytes[base...] : [] }

    /// `source` (a prefix of the tail) rendered as what follows the committed blocks: parsed after the
    /// definition prelude, so a reference defined in a committed block resolves as it will at commit,
    /// but only its own blocks' HTML is returned. Never changes the committed state. Returns the HTML
    /// and the bytes handed to cmark.
    func renderProvisional(_ source: ArraySlice<UInt8>) -> (html: String, parsed: Int) {
        var text = prelude
        text.append(contentsOf: source)
        let preludeLines = self.preludeLines
        let html = renderer.withDocument(text) { document in
            document.topLevelBlocks()
                .filter { $0.kind != .footnoteDefinition && (preludeLines == 0 || $0.startLine > preludeLines) }
                .map { document.html(of: $0.node) }
                .joined()
        }
        return (html, text.count)
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

        let parse: Parse? = renderer.withDocument(source) { document in
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
            let openFence = count < candidates.count ? Self.openFence(last, lines: lines) : nil
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
            guard let cutLine, count > 0, cutLine > 1, cutLine <= lines.count + 1 else {
                return Parse(committed: nil, openFence: openFence)
            }

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
            return Parse(committed: (html, cutLine, segments), openFence: openFence)
        }
        defer { watchOpenBlock(fence: parse?.openFence, committed: parse?.committed != nil) }
        guard let outcome = parse?.committed else { return [] }

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

    /// What one parse found: the blocks to commit (nil when none) and, when the open block is a
    /// top-level fenced code block still waiting for its closing fence, that fence.
    private struct Parse {
        let committed: (html: [String], cutLine: Int, segments: [Range<Int>])?
        let openFence: (character: UInt8, length: Int)?
    }

    /// The fence of `candidate` when it is a fenced code block with no closing fence in `lines` yet.
    /// Top-level, so nothing but that fence can end it (no container around it can close).
    private static func openFence(_ candidate: Candidate, lines: LineIndex) -> (character: UInt8, length: Int)? {
        guard candidate.block.kind == .codeBlock, let fence = candidate.block.fence,
              let start = candidate.reportedStart, start <= lines.count else { return nil }
        let body = (start + 1)..<(lines.count + 1)
        guard !lines.containsClosingFence(body, character: fence.character, length: fence.length) else { return nil }
        return fence
    }

    /// After a parse: how to tell whether the next lines need another one.
    private mutating func watchOpenBlock(fence: (character: UInt8, length: Int)?, committed: Bool) {
        if let fence {
            open = .fence(character: fence.character, length: fence.length, scanned: complete)
        } else if complete - base > policy.smallRegionBytes {
            let region = LineIndex(bytes[base..<complete])
            open = .growing(parsedSize: complete - base, at: .now, scanned: complete,
                            opener: region.firstCharacterClass(), afterBlank: region.isBlank(line: region.count),
                            armed: committed || !triggeredByLine)
        } else {
            open = .unknown
        }
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
