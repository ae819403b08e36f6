/// Module ParleyFiles: attachments (issue 21). Uploads go through `MediaProcessor` (what a file is,
/// re-encoded and checked in a child process) into the store's `FileStore`; messages carry them by id
/// and `StoredAttachments` hands them to the context builder. It must never know how replies stream.
///
/// The limits of files: one upload's bytes, a user's total, and how many files one message carries.
package struct FileSettings: Sendable, Equatable {
    /// PARLEY_MAX_FILE_BYTES: the largest upload (also the upload route's body limit).
    package var maxFileBytes: Int
    /// PARLEY_MAX_USER_FILE_BYTES: every file a user keeps, together (kept-for-messages files count).
    package var maxUserFileBytes: Int64
    /// PARLEY_MAX_ATTACHMENTS: files on one message.
    package var maxAttachments: Int

    package static let defaultMaxUserFileBytes: Int64 = 1 << 30
    package static let defaultMaxAttachments = 10

    package init(maxFileBytes: Int = 20 << 20, maxUserFileBytes: Int64 = FileSettings.defaultMaxUserFileBytes,
                 maxAttachments: Int = FileSettings.defaultMaxAttachments) {
        self.maxFileBytes = maxFileBytes
        self.maxUserFileBytes = maxUserFileBytes
        self.maxAttachments = maxAttachments
    }
}
