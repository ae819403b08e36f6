import Foundation

/// Tiny PDFs written as literal PDF text here, with a correct cross-reference table computed from
/// the objects' byte offsets.
enum PDFFixtures {
    /// A PDF of `objects` (the bodies of objects 1...n, object 1 the catalog).
    static func pdf(_ objects: [String]) -> Data {
        var text = "%PDF-1.4\n"
        var offsets: [Int] = []
        for (index, body) in objects.enumerated() {
            offsets.append(text.utf8.count)
            text += "\(index + 1) 0 obj\n\(body)\nendobj\n"
        }
        let xref = text.utf8.count
        text += "xref\n0 \(objects.count + 1)\n0000000000 65535 f \n"
        for offset in offsets { text += String(format: "%010d 00000 n \n", offset) }
        text += "trailer\n<< /Size \(objects.count + 1) /Root 1 0 R >>\nstartxref\n\(xref)\n%%EOF\n"
        return Data(text.utf8)
    }

    /// One page per string, each showing it in Helvetica (an empty string: a page without text).
    static func pages(_ texts: [String]) -> Data {
        let count = texts.count
        // 1 catalog, 2 pages, 3 font, then per page: the page object and its content stream.
        let kids = (0..<count).map { "\(4 + 2 * $0) 0 R" }.joined(separator: " ")
        var objects = ["<< /Type /Catalog /Pages 2 0 R >>",
                       "<< /Type /Pages /Kids [\(kids)] /Count \(count) >>",
                       "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
        for (index, text) in texts.enumerated() {
            let content = text.isEmpty ? "0 0 1 rg 72 72 200 200 re f" : "BT /F1 24 Tf 72 720 Td (\(text)) Tj ET"
            objects.append("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents \(5 + 2 * index) 0 R >>")
            objects.append("<< /Length \(content.utf8.count) >>\nstream\n\(content)\nendstream")
        }
        return pdf(objects)
    }

    /// A page tree whose /Kids hold the tree itself (and a page whose /Parent is itself).
    static let recursive = pdf([
        "<< /Type /Catalog /Pages 2 0 R >>",
        "<< /Type /Pages /Kids [2 0 R 3 0 R] /Count 2 >>",
        "<< /Type /Pages /Parent 3 0 R /Kids [3 0 R 2 0 R] /Count 1 >>",
    ])
}
