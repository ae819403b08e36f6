import CCmarkGFM
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Safe HTML from Markdown through cmark-gfm with the GitHub extensions (tables, strikethrough,
/// autolinks, tag filter, task lists) and, by default, footnotes.
///
/// Model output is untrusted, so the renderer never passes `CMARK_OPT_UNSAFE`: raw HTML becomes
/// `<!-- raw HTML omitted -->` and `javascript:`, `vbscript:`, `file:` and non-image `data:` URLs are
/// emptied by cmark. No `style=` attribute is ever emitted (table alignment uses `align=`), so the
/// output fits a strict Content-Security-Policy. Code fences keep `class="language-x"`.
///
/// Thread-safety: safe from any number of threads. Every call builds and frees its own cmark parser,
/// but cmark-gfm's inline parser keeps the extensions' special characters in one process-wide table
/// that each parse adds to and removes from (github/cmark-gfm PR #176, unmerged), so parsing is
/// serialised by one lock; rendering HTML runs outside it.
public struct MarkdownRenderer: Sendable {
    /// Whether `[^label]` footnotes are parsed (`CMARK_OPT_FOOTNOTES`); their section renders last.
    public var footnotes: Bool

    public init(footnotes: Bool = true) {
        self.footnotes = footnotes
    }

    /// The whole document as HTML.
    public func render(_ markdown: String) -> String {
        withDocument(Array(markdown.utf8)) { document in
            document.html(of: document.root)
        }
    }

    /// The HTML of each top-level block in document order, the footnotes section (if any) last.
    /// Concatenated, the blocks equal `render(markdown)` byte for byte.
    public func renderBlocks(_ markdown: String) -> [String] {
        withDocument(Array(markdown.utf8)) { document in
            let whole = document.html(of: document.root)
            var blocks: [String] = []
            var length = 0
            for block in document.topLevelBlocks() where block.kind != .footnoteDefinition {
                let html = document.html(of: block.node)
                length += html.utf8.count
                blocks.append(html)
            }
            // The footnotes section is only rendered as a whole (cmark wraps the definitions in one
            // <section>), so it is what the whole render has after the blocks.
            let prefix = blocks.joined()
            guard whole.utf8.starts(with: prefix.utf8) else { return whole.isEmpty ? [] : [whole] }
            let rest = String(decoding: whole.utf8.dropFirst(length), as: UTF8.self)
            if !rest.isEmpty { blocks.append(rest) }
            return blocks
        }
    }

    // MARK: - Node-level access (for StableMarkdown)

    /// The cmark options for both parsing and rendering. Never `CMARK_OPT_UNSAFE`, never
    /// `CMARK_OPT_GITHUB_PRE_LANG` (fences keep `<code class="language-x">`), never
    /// `CMARK_OPT_TABLE_PREFER_STYLE_ATTRIBUTES` (no inline styles).
    var options: Int32 {
        CMARK_OPT_DEFAULT | (footnotes ? CMARK_OPT_FOOTNOTES : 0)
    }

    /// The GFM extensions attached to every parser.
    static let extensionNames = ["table", "strikethrough", "autolink", "tagfilter", "tasklist"]

    /// Runs once per process (a `static let` initialiser is thread-safe); registers the GFM
    /// extensions, which also gives `CMARK_NODE_TABLE` its value.
    private static let registration: Void = {
        cmark_gfm_core_extensions_ensure_registered()
    }()

    /// Serialises cmark parsing process-wide (see the type's thread-safety note).
    private static let parseLock = Mutex(())

    /// Parses `bytes` (UTF-8) and hands the document to `body`; parser and nodes live exactly as long
    /// as the call, so nothing of cmark escapes.
    func withDocument<Result>(_ bytes: [UInt8], _ body: (ParsedMarkdown) -> Result) -> Result {
        _ = Self.registration
        guard let parser = cmark_parser_new(options) else {
            // Only on allocation failure; cmark aborts in that case anyway.
            return body(ParsedMarkdown(parser: nil, root: nil, options: options))
        }
        defer { cmark_parser_free(parser) }
        for name in Self.extensionNames {
            if let syntax = cmark_find_syntax_extension(name) {
                cmark_parser_attach_syntax_extension(parser, syntax)
            }
        }
        var root: OpaquePointer?
        Self.parseLock.withLock { _ in
            bytes.withUnsafeBufferPointer { buffer in
                buffer.withMemoryRebound(to: CChar.self) { chars in
                    if let base = chars.baseAddress, !chars.isEmpty {
                        cmark_parser_feed(parser, base, chars.count)
                    }
                }
            }
            root = cmark_parser_finish(parser)
        }
        defer { if let root { cmark_node_free(root) } }
        return body(ParsedMarkdown(parser: parser, root: root, options: options))
    }
}

/// A parsed cmark document, valid only inside `MarkdownRenderer.withDocument`.
struct ParsedMarkdown {
    let parser: OpaquePointer?
    let root: OpaquePointer?
    let options: Int32

    /// The document's top-level children in order (cmark has moved footnote definitions to the end).
    func topLevelBlocks() -> [MarkdownBlockNode] {
        var blocks: [MarkdownBlockNode] = []
        var child = root.flatMap { cmark_node_first_child($0) }
        while let node = child {
            blocks.append(MarkdownBlockNode(
                node: node,
                kind: MarkdownBlockNode.Kind(cmark_node_get_type(node)),
                startLine: Int(cmark_node_get_start_line(node)),
                endLine: Int(cmark_node_get_end_line(node))))
            child = cmark_node_next(node)
        }
        return blocks
    }

    /// The HTML of `node` and its descendants, rendered with the parser's extensions.
    func html(of node: OpaquePointer?) -> String {
        guard let node, let parser else { return "" }
        guard let cString = cmark_render_html(node, options, cmark_parser_get_syntax_extensions(parser)) else {
            return ""
        }
        defer { free(cString) }
        return String(cString: cString)
    }
}

/// One top-level block of a parsed document, as StableMarkdown needs it.
struct MarkdownBlockNode {
    enum Kind: Equatable {
        case paragraph, heading, thematicBreak, codeBlock, htmlBlock, blockQuote, list, table
        case footnoteDefinition, other

        init(_ type: cmark_node_type) {
            switch type {
            case CMARK_NODE_PARAGRAPH: self = .paragraph
            case CMARK_NODE_HEADING: self = .heading
            case CMARK_NODE_THEMATIC_BREAK: self = .thematicBreak
            case CMARK_NODE_CODE_BLOCK: self = .codeBlock
            case CMARK_NODE_HTML_BLOCK: self = .htmlBlock
            case CMARK_NODE_BLOCK_QUOTE: self = .blockQuote
            case CMARK_NODE_LIST: self = .list
            case CMARK_NODE_FOOTNOTE_DEFINITION: self = .footnoteDefinition
            case CMARK_NODE_TABLE: self = .table
            default: self = .other
            }
        }
    }

    let node: OpaquePointer
    let kind: Kind
    /// 1-based line numbers in the parsed text; 0 or `endLine < startLine` mean "unknown".
    let startLine: Int
    let endLine: Int

    /// For a fenced code block: the fence character and length; nil for indented code.
    var fence: (character: UInt8, length: Int)? {
        var length: Int32 = 0
        var offset: Int32 = 0
        var character: CChar = 0
        guard cmark_node_get_fenced(node, &length, &offset, &character) != 0 else { return nil }
        return (UInt8(bitPattern: character), Int(length))
    }
}
