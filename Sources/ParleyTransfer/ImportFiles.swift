import ParleyHTTP

/// One conversation's attachments as an import document gives them (issue 21): its `files` entries
/// and which of them each message shows, each with its place in the document, so a file that fails
/// its checks or a message naming a file that is not there is refused by where it is
/// (`conversations[0].files[1]`, `messages[3].files[0]`).
///
/// The ids are the exporting server's: the import stores the files (`FileIngest`, `.verify`) and
/// maps each id to the stored file's before the messages are written.
struct ImportFiles: Sendable {
    /// A `files` entry: `data` is `"@N"` (the N-th file `ImportSplitter` took out of the document), or
    /// absent in an export made with `?attachments=omit`.
    struct Entry: Decodable, Sendable {
        let id: String
        let filename: String
        let mediaType: String?
        let kind: String?
        let data: String?

        enum CodingKeys: String, CodingKey {
            case id, filename, kind, data
            case mediaType = "media_type"
        }
    }

    /// A message's `files`: the ids it shows, in order.
    struct Reference: Sendable {
        let place: String
        let messageID: String
        let fileIDs: [String]
    }

    /// The entries with their places (`conversations[0].files[1]`).
    var entries: [(place: String, entry: Entry)] = []
    var references: [Reference] = []

    /// The splitter's index in `data` (`"@N"`), nil when the entry carries no bytes.
    static func fileIndex(_ data: String?, place: String) throws(HTTPError) -> Int? {
        guard let data else { return nil }
        guard data.hasPrefix("@"), let index = Int(data.dropFirst()), index >= 0 else {
            throw ImportDocument.invalid("\(place).data: must be the file's bytes in base64.")
        }
        return index
    }
}
