import Foundation

/// Decides a file's kind from its bytes, never from the client's declared type: magic numbers for
/// images and PDF; otherwise UTF-8 text, where the extension picks among the text types. Everything
/// else is refused naming what was found, so the person knows why. SVG is refused outright: it is
/// script-capable XML, and serving it from Parley's origin would be stored XSS.
public enum FileSniffer {
    /// Bytes read from the start of a file; enough for every signature and a fair UTF-8 check.
    public static let headLength = 4096

    /// Sniffs the first `headLength` bytes of `file`. The worker validates UTF-8 and JSON on the
    /// whole file; this look costs one small read, so a ZIP is refused without spawning anything.
    public static func sniff(file: URL, filename: String) throws(MediaError) -> SniffedFormat {
        guard let handle = try? FileHandle(forReadingFrom: file) else {
            throw .unreadable("the uploaded file cannot be opened")
        }
        defer { try? handle.close() }
        let head = (try? handle.read(upToCount: headLength)) ?? nil
        let atEnd = ((try? handle.read(upToCount: 1)) ?? nil)?.isEmpty ?? true
        return try sniff(head: Array(head ?? Data()), filename: filename, complete: atEnd)
    }

    /// Sniffs `head`, the file's first bytes (`complete` when it is the whole file, so a UTF-8
    /// character cut at its end is a fault rather than the edge of the read).
    public static func sniff(head: [UInt8], filename: String, complete: Bool) throws(MediaError) -> SniffedFormat {
        if head.isEmpty { throw .empty }
        if let format = imageOrPDF(head) { return format }
        if let other = otherBinary(head, ext: fileExtension(filename)) { throw .unsupported(found: other) }
        // UTF-16 text (a byte-order mark) is text, in the wrong encoding.
        if head.starts(with: [0xFF, 0xFE]) || head.starts(with: [0xFE, 0xFF]) { throw .notUTF8 }
        if head.contains(0) { throw .unsupported(found: "binary data") }
        guard isUTF8(head, complete: complete) else { throw .notUTF8 }
        return try textFormat(head, ext: fileExtension(filename))
    }

    static func fileExtension(_ filename: String) -> String {
        guard let dot = filename.lastIndex(of: "."), dot != filename.startIndex else { return "" }
        return filename[filename.index(after: dot)...].lowercased()
    }

    // MARK: - Signatures

    private static func imageOrPDF(_ head: [UInt8]) -> SniffedFormat? {
        if head.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        if head.starts(with: [0xFF, 0xD8, 0xFF]) { return .jpeg }
        if head.starts(with: Array("GIF87a".utf8)) || head.starts(with: Array("GIF89a".utf8)) { return .gif }
        if head.count >= 12, head.starts(with: Array("RIFF".utf8)), Array(head[8..<12]) == Array("WEBP".utf8) {
            return .webp
        }
        // PDF readers accept the header anywhere in the first KiB; so does Parley.
        if find(Array("%PDF-".utf8), in: head.prefix(1024)) != nil { return .pdf }
        return nil
    }

    private static func otherBinary(_ head: [UInt8], ext: String) -> String? {
        func starts(_ bytes: [UInt8]) -> Bool { head.starts(with: bytes) }
        func starts(_ text: String) -> Bool { head.starts(with: Array(text.utf8)) }
        if starts([0x50, 0x4B, 0x03, 0x04]) || starts([0x50, 0x4B, 0x05, 0x06]) {
            let office = ["docx": "a Word document", "xlsx": "an Excel workbook", "pptx": "a PowerPoint file",
                          "odt": "an OpenDocument file", "epub": "an EPUB book"]
            return office[ext].map { "\($0) (a ZIP archive)" } ?? "a ZIP archive"
        }
        if starts([0x1F, 0x8B]) { return "a gzip archive" }
        if starts([0x37, 0x7A, 0xBC, 0xAF, 0x27, 0x1C]) { return "a 7-Zip archive" }
        if starts("Rar!") { return "a RAR archive" }
        if starts([0x7F, 0x45, 0x4C, 0x46]) { return "an executable (ELF)" }
        if starts("MZ") { return "a Windows executable" }
        if starts("BM") && head.count > 14 && head.contains(0) { return "a BMP image" }
        if starts([0x49, 0x49, 0x2A, 0x00]) || starts([0x4D, 0x4D, 0x00, 0x2A]) { return "a TIFF image" }
        if head.count >= 12, Array(head[4..<8]) == Array("ftyp".utf8) {
            let brand = String(decoding: head[8..<12], as: UTF8.self)
            return ["heic", "heix", "mif1", "msf1", "avif"].contains(brand) ? "a HEIF/AVIF image" : "a video (MP4/QuickTime)"
        }
        if starts("RIFF") && head.count >= 12 { return "a RIFF media file (audio or video)" }
        if starts("ID3") || starts([0xFF, 0xFB]) { return "an MP3 audio file" }
        if starts("OggS") { return "an Ogg media file" }
        if starts([0x00, 0x00, 0x01, 0x00]) { return "an ICO icon" }
        if starts("SQLite format 3") { return "an SQLite database" }
        if starts([0xD0, 0xCF, 0x11, 0xE0]) { return "an old Office document" }
        if starts([0x00, 0x00, 0x00, 0x0C, 0x6A, 0x50]) { return "a JPEG 2000 image" }
        return nil
    }

    // MARK: - Text

    private static func textFormat(_ head: [UInt8], ext: String) throws(MediaError) -> SniffedFormat {
        let start = String(decoding: head.prefix(1024), as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
        // An SVG document, not an HTML page that happens to hold an inline <svg>.
        let prolog = start.hasPrefix("<?xml") || start.hasPrefix("<!--") || start.hasPrefix("<!doctype svg")
        let svg = start.hasPrefix("<svg") || (prolog && start.contains("<svg") && !start.contains("<html"))
        if ext == "svg" || ext == "svgz" || svg { throw .unsupported(found: "an SVG image") }
        if ["png", "jpg", "jpeg", "gif", "webp", "pdf", "bmp", "tif", "tiff", "ico", "heic", "avif"].contains(ext) {
            let what = start.hasPrefix("<!doctype html") || start.hasPrefix("<html") ? "HTML" : "text"
            throw .unsupported(found: "\(what) named as .\(ext)")
        }
        switch ext {
        case "md", "markdown": return .text(mediaType: "text/markdown")
        case "csv": return .text(mediaType: "text/csv")
        case "json": return .text(mediaType: "application/json")
        default: return .text(mediaType: "text/plain")
        }
    }

    /// Whether `bytes` are UTF-8; an incomplete character at the end is allowed unless `complete`.
    static func isUTF8(_ bytes: [UInt8], complete: Bool) -> Bool {
        var checked = bytes[...]
        if !complete {
            // Drop a possibly cut last character: up to 3 trailing bytes after its lead byte.
            var cut = checked.endIndex
            var back = 0
            while cut > checked.startIndex, back < 4 {
                cut -= 1
                back += 1
                if checked[cut] & 0xC0 != 0x80 { break }
            }
            if cut >= checked.startIndex, cut < checked.endIndex, checked[cut] >= 0xC0 { checked = checked[..<cut] }
        }
        return String(validating: checked, as: UTF8.self) != nil
    }

    private static func find(_ needle: [UInt8], in haystack: ArraySlice<UInt8>) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for index in haystack.startIndex...(haystack.endIndex - needle.count)
            where haystack[index..<(index + needle.count)].elementsEqual(needle) {
            return index
        }
        return nil
    }
}
