extension Migration {
    /// v1–v6: conversations and the message tree, reasoning, accounts, daily output, search, pins and archive.
    static let history: [Migration] = [
        Migration(name: "v1_conversations_and_messages", sql: """
            CREATE TABLE conversations (
                id              TEXT PRIMARY KEY NOT NULL,
                title           TEXT NOT NULL,
                model           TEXT,
                system_prompt   TEXT,
                -- kept by the store (not a foreign key: a cascade over a big tree would scan
                -- conversations once per deleted message)
                current_leaf_id TEXT,
                created_at      INTEGER NOT NULL,   -- milliseconds since 1970
                updated_at      INTEGER NOT NULL
            );
            -- keyset pagination: ORDER BY updated_at DESC, id DESC
            CREATE INDEX conversations_by_updated ON conversations (updated_at, id);

            CREATE TABLE messages (
                id              TEXT PRIMARY KEY NOT NULL,
                conversation_id TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
                parent_id       TEXT REFERENCES messages (id) ON DELETE CASCADE,
                role            TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'system')),
                content         TEXT NOT NULL DEFAULT '',
                status          TEXT NOT NULL
                                CHECK (status IN ('streaming', 'complete', 'stopped', 'failed', 'interrupted')),
                finish_reason   TEXT,
                model           TEXT,
                usage           TEXT,               -- raw JSON from the provider
                error_code      TEXT,
                error_message   TEXT,
                html            TEXT,               -- final rendered HTML of a finished message
                created_at      INTEGER NOT NULL,   -- milliseconds since 1970, strictly increasing
                updated_at      INTEGER NOT NULL
            );
            -- children of a message in sibling order (tree walks, cascades)
            CREATE INDEX messages_by_parent ON messages (parent_id, created_at, id);
            -- roots of a conversation in sibling order, and the conversation cascade
            CREATE INDEX messages_by_conversation ON messages (conversation_id, parent_id, created_at, id);
            -- the startup sweep of unfinished messages stays cheap however big the table
            CREATE INDEX messages_streaming ON messages (status) WHERE status = 'streaming';
            """),
        Migration(name: "v2_message_reasoning", sql: """
            -- the model's reasoning ("thinking") before its answer: plain text, never sent back upstream
            ALTER TABLE messages ADD COLUMN reasoning TEXT NOT NULL DEFAULT '';
            """),
        Migration(name: "v3_messages_without_html", sql: """
            -- finished messages still to be rendered (cut by a crash, or stored by an older version)
            -- are found at startup without reading the table; streaming ones are the only others
            CREATE INDEX messages_without_html ON messages (id) WHERE html IS NULL;
            """),
        Migration(name: "v4_accounts", sql: """
            -- team mode: accounts, sign-in sessions and API tokens; secrets are stored only as digests
            CREATE TABLE users (
                id              TEXT PRIMARY KEY NOT NULL,
                username        TEXT NOT NULL UNIQUE COLLATE NOCASE,
                display_name    TEXT NOT NULL,
                role            TEXT NOT NULL CHECK (role IN ('admin', 'member')),
                disabled        INTEGER NOT NULL DEFAULT 0,
                password_hash   TEXT,               -- Argon2id string; NULL for proxy sign-in only
                created_at      INTEGER NOT NULL
            );
            CREATE TABLE sessions (
                id              TEXT PRIMARY KEY NOT NULL,
                user_id         TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                token_digest    TEXT NOT NULL UNIQUE,
                user_agent      TEXT NOT NULL DEFAULT '',
                created_at      INTEGER NOT NULL,
                last_used_at    INTEGER NOT NULL
            );
            CREATE INDEX sessions_by_user ON sessions (user_id);
            CREATE TABLE api_tokens (
                id              TEXT PRIMARY KEY NOT NULL,
                user_id         TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                name            TEXT NOT NULL,
                token_digest    TEXT NOT NULL UNIQUE,
                created_at      INTEGER NOT NULL,
                last_used_at    INTEGER
            );
            CREATE INDEX api_tokens_by_user ON api_tokens (user_id);
            -- every conversation belongs to one user; 'local' is local mode's implicit user
            ALTER TABLE conversations ADD COLUMN owner_id TEXT NOT NULL DEFAULT 'local';
            CREATE INDEX conversations_by_owner ON conversations (owner_id, updated_at, id);
            """),
        Migration(name: "v5_daily_output", sql: """
            -- output tokens per user and UTC day, for PARLEY_USER_DAILY_OUTPUT_TOKENS: one row read per
            -- check, however many messages there are. Kept by a trigger when a reply run stops streaming
            -- (complete, stopped, failed, interrupted), in the same transaction as that write; deleting
            -- the conversation later does not give the budget back.
            CREATE TABLE daily_output (
                user_id         TEXT NOT NULL,
                day             INTEGER NOT NULL,   -- days since 1970 (UTC)
                output_tokens   INTEGER NOT NULL,
                PRIMARY KEY (user_id, day)
            ) WITHOUT ROWID;
            -- the provider's reported output_tokens for the run; without usage, the text's UTF-8 bytes / 4
            CREATE TRIGGER daily_output_on_finish AFTER UPDATE OF status ON messages
            WHEN old.status = 'streaming' AND new.status != 'streaming' AND new.role = 'assistant'
            BEGIN
                INSERT INTO daily_output (user_id, day, output_tokens)
                VALUES ((SELECT owner_id FROM conversations WHERE id = new.conversation_id),
                        new.updated_at / 86400000,
                        coalesce(CASE WHEN json_valid(new.usage) THEN json_extract(new.usage, '$.output_tokens') END,
                                 length(CAST(new.content AS BLOB)) / 4))
                ON CONFLICT (user_id, day) DO UPDATE SET output_tokens = output_tokens + excluded.output_tokens;
            END;
            """),
        Migration(name: "v6_search_pin_archive", sql: """
            -- organising: pinned and archived conversations (archived ones are hidden from the list by default)
            ALTER TABLE conversations ADD COLUMN pinned INTEGER NOT NULL DEFAULT 0;
            ALTER TABLE conversations ADD COLUMN archived INTEGER NOT NULL DEFAULT 0;
            -- full-text search (docs/api.md "Search"). The trigram tokenizer indexes every 3-character
            -- substring, so CJK text (no spaces between words), accents and partial words all match.
            -- It keeps its own copy of the text: the index owns its rowids, and `search_documents`
            -- (an explicit INTEGER PRIMARY KEY, which VACUUM never renumbers) maps them to messages and
            -- titles. Only finished messages are indexed: a streaming reply's progress saves (every
            -- 200 ms) would otherwise re-index its whole text each time. U+E000 and U+E001 are removed
            -- from the indexed copy: they mark the matches in snippets.
            CREATE VIRTUAL TABLE search_index USING fts5 (body, tokenize = 'trigram');
            CREATE TABLE search_documents (
                doc_id          INTEGER PRIMARY KEY,    -- the rowid in search_index
                conversation_id TEXT NOT NULL,
                message_id      TEXT UNIQUE             -- NULL: the conversation's title
            );
            CREATE UNIQUE INDEX search_documents_titles ON search_documents (conversation_id) WHERE message_id IS NULL;

            CREATE TRIGGER search_message_added AFTER INSERT ON messages WHEN new.status <> 'streaming'
            BEGIN
                INSERT INTO search_documents (conversation_id, message_id) VALUES (new.conversation_id, new.id);
                INSERT INTO search_index (rowid, body)
                SELECT doc_id, replace(replace(new.content, char(57344), ''), char(57345), '')
                FROM search_documents WHERE message_id = new.id;
            END;
            CREATE TRIGGER search_message_changed AFTER UPDATE OF content, status ON messages
            WHEN old.status <> 'streaming' OR new.status <> 'streaming'
            BEGIN
                DELETE FROM search_index WHERE rowid = (SELECT doc_id FROM search_documents WHERE message_id = old.id);
                DELETE FROM search_documents WHERE message_id = old.id;
                INSERT INTO search_documents (conversation_id, message_id)
                SELECT new.conversation_id, new.id WHERE new.status <> 'streaming';
                INSERT INTO search_index (rowid, body)
                SELECT doc_id, replace(replace(new.content, char(57344), ''), char(57345), '')
                FROM search_documents WHERE message_id = new.id;
            END;
            CREATE TRIGGER search_message_deleted AFTER DELETE ON messages WHEN old.status <> 'streaming'
            BEGIN
                DELETE FROM search_index WHERE rowid = (SELECT doc_id FROM search_documents WHERE message_id = old.id);
                DELETE FROM search_documents WHERE message_id = old.id;
            END;
            CREATE TRIGGER search_title_added AFTER INSERT ON conversations
            BEGIN
                INSERT INTO search_documents (conversation_id, message_id) VALUES (new.id, NULL);
                INSERT INTO search_index (rowid, body)
                SELECT doc_id, replace(replace(new.title, char(57344), ''), char(57345), '')
                FROM search_documents WHERE conversation_id = new.id AND message_id IS NULL;
            END;
            CREATE TRIGGER search_title_changed AFTER UPDATE OF title ON conversations WHEN old.title <> new.title
            BEGIN
                DELETE FROM search_index WHERE rowid =
                    (SELECT doc_id FROM search_documents WHERE conversation_id = old.id AND message_id IS NULL);
                INSERT INTO search_index (rowid, body)
                SELECT doc_id, replace(replace(new.title, char(57344), ''), char(57345), '')
                FROM search_documents WHERE conversation_id = new.id AND message_id IS NULL;
            END;
            CREATE TRIGGER search_title_deleted AFTER DELETE ON conversations
            BEGIN
                DELETE FROM search_index WHERE rowid =
                    (SELECT doc_id FROM search_documents WHERE conversation_id = old.id AND message_id IS NULL);
                DELETE FROM search_documents WHERE conversation_id = old.id AND message_id IS NULL;
            END;

            -- the rows written before this version
            INSERT INTO search_documents (conversation_id, message_id) SELECT id, NULL FROM conversations;
            INSERT INTO search_documents (conversation_id, message_id)
            SELECT conversation_id, id FROM messages WHERE status <> 'streaming';
            INSERT INTO search_index (rowid, body)
            SELECT d.doc_id, replace(replace(coalesce(m.content, c.title), char(57344), ''), char(57345), '')
            FROM search_documents d
            LEFT JOIN messages m ON m.id = d.message_id
            LEFT JOIN conversations c ON c.id = d.conversation_id AND d.message_id IS NULL;
            """),
    ]
}
