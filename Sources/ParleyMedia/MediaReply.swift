/// The child's one JSON line on stdout: the result or the reason for refusing the file.
package struct MediaReply: Codable, Sendable {
    package var media: ProcessedMedia?
    package var error: MediaError?

    package init(media: ProcessedMedia?, error: MediaError?) {
        self.media = media
        self.error = error
    }
}
