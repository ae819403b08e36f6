import ParleyStore

/// A search snippet as HTML in which `<mark>` is the only markup: the text is escaped, then the
/// store's match delimiters (private-use characters, never in the indexed text) become `<mark>` and
/// `</mark>`. Marks are always balanced, so a snippet can be placed with `innerHTML` as it is.
enum SnippetHTML {
    static func render(_ marked: String) -> String {
        var html = ""
        html.reserveCapacity(marked.utf8.count + 32)
        var open = false
        for scalar in marked.unicodeScalars {
            switch scalar {
            case SearchHit.matchStart where !open:
                html += "<mark>"
                open = true
            case SearchHit.matchEnd where open:
                html += "</mark>"
                open = false
            case SearchHit.matchStart, SearchHit.matchEnd:
                continue
            case "&": html += "&amp;"
            case "<": html += "&lt;"
            case ">": html += "&gt;"
            case "\"": html += "&quot;"
            case "'": html += "&#39;"
            default: html.unicodeScalars.append(scalar)
            }
        }
        if open { html += "</mark>" }
        return html
    }
}
