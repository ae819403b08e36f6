import CCmarkGFM

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
