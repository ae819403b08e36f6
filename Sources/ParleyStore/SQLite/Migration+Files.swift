extension Migration {
    /// v13–: uploaded files (issue 21). Their bytes live in the files database beside this one
    /// (`FileBlobs`); the rows that say who owns them and which messages show them live here, so a
    /// reference is never half-written across the two files. New steps go at the end.
    static let files: [Migration] = [
        Migration(name: "v13_files", sql: """
            -- one row per stored file. Not a foreign key to users: local mode's user has no row there.
            CREATE TABLE files (
                id                   TEXT PRIMARY KEY NOT NULL,
                owner_id             TEXT NOT NULL,
                filename             TEXT NOT NULL,
                media_type           TEXT NOT NULL,
                kind                 TEXT NOT NULL CHECK (kind IN ('image', 'document')),
                bytes                INTEGER NOT NULL,   -- size of the stored bytes
                sha256               TEXT NOT NULL,      -- hex, of the stored bytes
                upload_sha256        TEXT NOT NULL,      -- hex, of the bytes as uploaded
                width                INTEGER,
                height               INTEGER,
                pages                INTEGER,
                text_chars           INTEGER,
                note                 TEXT,
                thumbnail_media_type TEXT,               -- NULL: no thumbnail
                blob_id              INTEGER NOT NULL UNIQUE,  -- blobs.id in the files database
                created_at           INTEGER NOT NULL,   -- milliseconds since 1970
                deleted_at           INTEGER             -- set when deleted while messages hold it
            );
            -- one file per upload and owner: the same bytes uploaded twice are one file (a deleted but
            -- kept one is brought back), while another owner gets a file of their own
            CREATE UNIQUE INDEX files_by_upload ON files (owner_id, upload_sha256);
            -- the owner's list, newest first (keyset pagination), live files only
            CREATE INDEX files_by_owner ON files (owner_id, created_at, id) WHERE deleted_at IS NULL;

            -- the files a message shows, in order; they go with the message (conversation deletes cascade).
            -- The key's columns come first: SQLite 3.40's quick_check (run on every backup) misreads a
            -- WITHOUT ROWID table whose key columns are not its leading ones ("NULL value in ...file_id").
            CREATE TABLE message_files (
                message_id TEXT NOT NULL REFERENCES messages (id) ON DELETE CASCADE,
                position   INTEGER NOT NULL,
                file_id    TEXT NOT NULL REFERENCES files (id) ON DELETE CASCADE,
                PRIMARY KEY (message_id, position)
            ) WITHOUT ROWID;
            -- "is this file still held?" without reading every message's files
            CREATE INDEX message_files_by_file ON message_files (file_id);

            -- a deleted file whose last holder goes, goes with it
            CREATE TRIGGER message_files_release_deleted AFTER DELETE ON message_files
            BEGIN
                DELETE FROM files WHERE id = old.file_id AND deleted_at IS NOT NULL
                    AND NOT EXISTS (SELECT 1 FROM message_files WHERE file_id = old.file_id);
            END;

            -- blobs whose file row is gone, to remove from the files database after the commit (a
            -- trigger cannot reach the other file); what a crash leaves here is removed at the next start
            CREATE TABLE released_blobs (blob_id INTEGER PRIMARY KEY NOT NULL);
            CREATE TRIGGER files_release_blob AFTER DELETE ON files
            BEGIN
                INSERT OR IGNORE INTO released_blobs (blob_id) VALUES (old.blob_id);
            END;
            """),
    ]
}
