/// What an upload's bytes were found to be while they arrived (`FileBodyInspector`), so `FileIngest`
/// does not read the file again for them: the hash dedupe compares, and whether it is UTF-8 text.
package struct UploadInspection: Sendable, Equatable {
    /// SHA-256 of the bytes, lower-case hex.
    package var sha256: String
    /// How many bytes were seen: the inspection describes a file of exactly this size.
    package var bytes: Int64
    /// The Unicode scalars when every byte was UTF-8 (no scalar cut at the end); nil otherwise.
    package var utf8Scalars: Int?

    package init(sha256: String, bytes: Int64, utf8Scalars: Int?) {
        self.sha256 = sha256
        self.bytes = bytes
        self.utf8Scalars = utf8Scalars
    }
}
