import CPoppler
import Foundation
import ParleyMedia

/// The child's PDF step (poppler-glib): the page count against the limit, then the text of every
/// page, streamed to `text.txt` with pages separated by a form feed. A PDF whose pages hold no text
/// (scanned) gets the note "no extractable text" and no text file. Runs in `MediaWorker` only.
struct PDFExtractor {
    let request: MediaRequest

    /// Between two pages' text: a form feed, as `pdftotext` writes.
    static let pageSeparator = "\u{0C}\n"

    func run() throws(MediaError) -> ProcessedMedia {
        let uri = URL(fileURLWithPath: request.input).absoluteString
        var error: UnsafeMutablePointer<GError>?
        guard let document = poppler_document_new_from_file(uri, nil, &error) else {
            let reason = error.map { String(cString: $0.pointee.message) } ?? "unknown error"
            if let error { g_error_free(error) }
            throw .unreadable("not a readable PDF (\(reason))")
        }
        defer { g_object_unref(UnsafeMutableRawPointer(document)) }
        let pages = Int(poppler_document_get_n_pages(document))
        if pages > request.pdfMaxPages { throw .tooManyPages(pages) }
        if pages < 1 { throw .unreadable("the PDF has no readable pages") }

        let url = request.output("text.txt")
        guard FileManager.default.createFile(atPath: url.path, contents: nil),
              let output = try? FileHandle(forWritingTo: url) else {
            throw .unreadable("cannot write the extracted text")
        }
        defer { try? output.close() }
        var characters = 0
        var hasText = false
        for index in 0..<pages {
            guard let page = poppler_document_get_page(document, Int32(index)) else {
                throw .unreadable("page \(index + 1) of the PDF cannot be read")
            }
            defer { g_object_unref(UnsafeMutableRawPointer(page)) }
            var text = ""
            if let raw = poppler_page_get_text(page) {
                text = String(cString: raw)
                g_free(raw)
            }
            if index > 0 { text = Self.pageSeparator + text }
            if !hasText { hasText = text.contains { !$0.isWhitespace } }
            characters += text.unicodeScalars.count
            do {
                try output.write(contentsOf: Data(text.utf8))
            } catch {
                throw .unreadable("cannot write the extracted text: \(error.localizedDescription)")
            }
        }
        let directory = URL(fileURLWithPath: request.outputDirectory)
        let input = URL(fileURLWithPath: request.input)
        guard hasText else {
            try? FileManager.default.removeItem(at: url)
            return ProcessedMedia(kind: .document, mediaType: "application/pdf", content: input, pages: pages,
                                  textCharacters: 0, note: ProcessedMedia.noExtractableText, workDirectory: directory)
        }
        return ProcessedMedia(kind: .document, mediaType: "application/pdf", content: input, pages: pages,
                              text: url, textCharacters: characters, workDirectory: directory)
    }
}
