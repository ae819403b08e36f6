/// The child's one JSON line on stdout: the result or the reason for refusing the file.
struct MediaReply: Codable, Sendable {
    var media: ProcessedMedia?
    var error: MediaError?
}
