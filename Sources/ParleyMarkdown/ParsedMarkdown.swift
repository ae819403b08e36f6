import CCmarkGFM

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

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
