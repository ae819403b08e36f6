import CCmarkGFM
import Synchronization

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
