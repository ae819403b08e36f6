import Foundation

/// Where uploaded files live: their rows (owner, kind, digests, the messages that hold them) and their
/// bytes, content read and written in chunks. The seam between the attachment features and a backend:
/// `Store` (SQLite) implements it; issue 24 adds PostgreSQL behind the same protocol, so nothing here
/// names a SQLite type.
///
/// Ownership is part of every lookup: another owner's file id is `StoreError.notFound(.file(id:))`,
/// exactly like an unknown id, so callers cannot tell the two apart (and neither can a client).
///
/// A file some message holds is never removed by `deleteFile`: it is marked deleted (hidden from
/// `listFiles`, refused by `attachFiles`, still readable by id for the messages that show it) and goes
/// when the last such message is deleted.
///
/// Every method is synchronous and may block briefly (see `Store`'s concurrency contract).
public protocol FileStore: Sendable {
    // MARK: Writing

    /// Stores a processed file: `content` (the bytes to keep) and `text` (a document's UTF-8 text) are
    /// local files read in chunks; `thumbnail` is small and given whole. When the owner already has a
    /// file from the same upload (`metadata.uploadSHA256`), that file is returned instead, brought
    /// back if it was deleted but kept, and nothing new is stored.
    func saveFile(
        _ metadata: FileMetadata, content: URL, thumbnail: [UInt8]?, text: URL?
    ) throws(StoreError) -> StoredFile

    /// The owner's file made from the upload whose SHA-256 is `uploadSHA256`, brought back to the
    /// list if it was deleted but kept; nil when there is none. Lets an upload skip processing bytes
    /// it has already stored.
    func fileForUpload(ownedBy owner: String, uploadSHA256: String) throws(StoreError) -> StoredFile?

    /// Removes the owner's file, or hides it while messages hold it (see `FileDeletion`).
    func deleteFile(id: String, ownedBy owner: String) throws(StoreError) -> FileDeletion

    /// Records that `messageID` shows `fileIDs`, in that order. Every id must be a live file of
    /// `owner` (deleted ones too with `includingDeleted`, for a branch that keeps its parent's files),
    /// or nothing is recorded and the first bad id is `notFound`.
    func attachFiles(
        _ fileIDs: [String], toMessage messageID: String, ownedBy owner: String, includingDeleted: Bool
    ) throws(StoreError)

    /// Collects what a crash or a message delete left behind: stored bytes no file refers to, and
    /// deleted files no message holds. Call once at start, before serving, from the serving process
    /// only (a save in another process is between its blob and its row for a moment). Returns how many
    /// blobs were removed.
    @discardableResult
    func collectOrphanFiles() throws(StoreError) -> Int

    // MARK: Reading

    /// The owner's file, live or deleted-but-kept.
    func file(id: String, ownedBy owner: String) throws(StoreError) -> StoredFile

    /// The owner's live files with these ids, in the order given: what a new message may attach, checked
    /// before anything is sent or stored. The first id that is not a live file of `owner` is `notFound`.
    func liveFiles(ids: [String], ownedBy owner: String) throws(StoreError) -> [StoredFile]

    /// The owner's live files, newest first; `cursor` is a previous page's `nextCursor`.
    func listFiles(ownedBy owner: String, limit: Int, cursor: String?) throws(StoreError) -> FilePage

    /// A reader of the stored bytes in `range` (half-open, clamped to the content; nil: all of them).
    func fileContent(
        id: String, ownedBy owner: String, range: Range<Int64>?, chunkSize: Int
    ) throws(StoreError) -> FileContentReader

    /// The thumbnail's bytes and media type, nil when the file has none.
    func fileThumbnail(id: String, ownedBy owner: String) throws(StoreError) -> (bytes: [UInt8], mediaType: String)?

    /// A document's stored text, nil when there is none.
    func fileText(id: String, ownedBy owner: String) throws(StoreError) -> String?

    /// The bytes all the owner's files take, deleted-but-kept ones included (they still take room):
    /// what `PARLEY_MAX_USER_FILE_BYTES` limits.
    func fileBytes(ownedBy owner: String) throws(StoreError) -> Int64

    /// The bytes of the distinct files the owner's messages show: what an export of all their
    /// conversations embeds, checked against its limit before the first byte is written.
    func attachedFileBytes(ownedBy owner: String) throws(StoreError) -> Int64

    /// The files each message shows, in order, keyed by message id (messages without files are absent).
    /// No owner is asked: callers have found the messages through their owner's conversation.
    func messageFiles(messageIDs: [String]) throws(StoreError) -> [String: [StoredFile]]
}

extension FileStore {
    /// `fileContent` with every byte in 256 KiB chunks.
    public func fileContent(
        id: String, ownedBy owner: String, range: Range<Int64>? = nil
    ) throws(StoreError) -> FileContentReader {
        try fileContent(id: id, ownedBy: owner, range: range, chunkSize: FileContentReader.defaultChunkSize)
    }

    /// `attachFiles` of live files only (a new message).
    public func attachFiles(_ fileIDs: [String], toMessage messageID: String, ownedBy owner: String) throws(StoreError) {
        try attachFiles(fileIDs, toMessage: messageID, ownedBy: owner, includingDeleted: false)
    }

    /// The files one message shows, in order.
    public func messageFiles(messageID: String) throws(StoreError) -> [StoredFile] {
        try messageFiles(messageIDs: [messageID])[messageID] ?? []
    }
}

