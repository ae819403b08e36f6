/// The files a request leaves out to fit the context, and the note that tells the model so: those of
/// earlier turns dropped whole, and those of the newest turn that did not fit beside it. The note is
/// written in plain words at the start of the first user turn sent (it is not counted in the budget:
/// it is a sentence per file).
struct LeftOutFiles {
    private(set) var earlierTurns = 0
    private(set) var earlier: [AttachmentSummary] = []
    private(set) var current: [AttachmentSummary] = []

    /// An earlier turn was dropped whole, with its files (turns without any are not counted: the
    /// builder has always dropped old text silently, and the note is about files).
    mutating func dropped(_ files: [AttachmentSummary]) {
        guard !files.isEmpty else { return }
        earlierTurns += 1
        earlier += files
    }

    /// A file of the newest turn did not fit.
    mutating func cut(_ file: AttachmentSummary) {
        current.append(file)
    }

    /// `[Left out to fit the model's context: from 1 earlier message, the image (image/png, 12,345
    /// bytes); from this message, the document "big.txt" (text/plain, 500,000 characters).]`, or nil
    /// when nothing was left out.
    var note: String? {
        var parts: [String] = []
        if !earlier.isEmpty {
            let messages = "\(earlierTurns) earlier message\(earlierTurns == 1 ? "" : "s")"
            parts.append("from \(messages), " + earlier.map(\.described).joined(separator: ", "))
        }
        if !current.isEmpty {
            parts.append("from this message, " + current.map(\.described).joined(separator: ", "))
        }
        guard !parts.isEmpty else { return nil }
        return "[Left out to fit the model's context: " + parts.joined(separator: "; ") + ".]"
    }
}
