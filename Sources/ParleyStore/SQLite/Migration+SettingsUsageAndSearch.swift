extension Migration {
    /// v7–v11: generation settings and usage, search owned by user, bounded token totals, plain user
    /// messages, preferences. New steps go at the end (or in a newer file that `all` lists after this one).
    static let settingsUsageAndSearch: [Migration] = [
        Migration(name: "v7_generation_settings_and_usage", sql: """
            -- per-conversation sampling settings sent to the provider; NULL: the provider's default
            ALTER TABLE conversations ADD COLUMN temperature REAL;
            ALTER TABLE conversations ADD COLUMN top_p REAL;
            ALTER TABLE conversations ADD COLUMN max_tokens INTEGER;
            -- tokens per user, UTC day and model, for GET /api/usage and the admin's totals: a day's
            -- rows are read by the primary key, however many messages there are. Like daily_output,
            -- deleting a conversation later does not take its usage back.
            CREATE TABLE usage_daily (
                user_id           TEXT NOT NULL,
                day               INTEGER NOT NULL,   -- days since 1970 (UTC)
                model             TEXT NOT NULL,      -- '' when the reply had none
                input_tokens      INTEGER NOT NULL,
                output_tokens     INTEGER NOT NULL,
                replies           INTEGER NOT NULL,   -- reply runs (a continue is a run of its own)
                estimated_replies INTEGER NOT NULL,   -- runs whose provider gave no usage
                PRIMARY KEY (user_id, day, model)
            ) WITHOUT ROWID;
            -- the same totals per conversation, shown in its JSON; gone with the conversation
            CREATE TABLE conversation_usage (
                conversation_id   TEXT PRIMARY KEY NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
                input_tokens      INTEGER NOT NULL,
                output_tokens     INTEGER NOT NULL,
                replies           INTEGER NOT NULL,
                estimated_replies INTEGER NOT NULL
            ) WITHOUT ROWID;
            -- When a reply run stops streaming: a reply whose provider reported no usage (or only half
            -- of it, as a stopped Anthropic stream does) gets an estimate, UTF-8 bytes / 4 (input: the
            -- system prompt and the branch above the reply, before context trimming), marked
            -- "estimated" (other fields of a usage object are kept); then the run is added to both
            -- totals. Same transaction as the final write.
            CREATE TRIGGER usage_on_finish AFTER UPDATE OF status ON messages
            WHEN old.status = 'streaming' AND new.status != 'streaming' AND new.role = 'assistant'
            BEGIN
                UPDATE messages SET usage = json_set(
                    CASE WHEN json_type(CASE WHEN json_valid(new.usage) THEN new.usage END) = 'object'
                         THEN new.usage ELSE '{}' END,
                    '$.input_tokens', coalesce(
                        CASE WHEN json_valid(new.usage) THEN json_extract(new.usage, '$.input_tokens') END,
                        ((SELECT coalesce(length(CAST(system_prompt AS BLOB)), 0) FROM conversations
                          WHERE id = new.conversation_id)
                         + (WITH RECURSIVE branch (id, parent_id, bytes) AS (
                                SELECT id, parent_id, length(CAST(content AS BLOB)) FROM messages
                                WHERE id = new.parent_id
                                UNION ALL
                                SELECT m.id, m.parent_id, length(CAST(m.content AS BLOB))
                                FROM messages m JOIN branch ON m.id = branch.parent_id)
                            SELECT coalesce(sum(bytes), 0) FROM branch)) / 4),
                    '$.output_tokens', coalesce(
                        CASE WHEN json_valid(new.usage) THEN json_extract(new.usage, '$.output_tokens') END,
                        length(CAST(new.content AS BLOB)) / 4),
                    '$.estimated', json('true'))
                -- (CASE, not AND: only CASE is sure not to run json_type on text that is not JSON)
                WHERE id = new.id AND NOT coalesce(CASE WHEN json_valid(new.usage) THEN
                    json_type(new.usage, '$.input_tokens') = 'integer'
                    AND json_type(new.usage, '$.output_tokens') = 'integer' END, 0);
                INSERT INTO usage_daily (user_id, day, model, input_tokens, output_tokens, replies, estimated_replies)
                SELECT c.owner_id, m.updated_at / 86400000, coalesce(m.model, ''),
                       coalesce(json_extract(m.usage, '$.input_tokens'), 0),
                       coalesce(json_extract(m.usage, '$.output_tokens'), 0), 1,
                       coalesce(json_extract(m.usage, '$.estimated'), 0)
                FROM messages m JOIN conversations c ON c.id = m.conversation_id WHERE m.id = new.id
                ON CONFLICT (user_id, day, model) DO UPDATE SET
                    input_tokens = input_tokens + excluded.input_tokens,
                    output_tokens = output_tokens + excluded.output_tokens,
                    replies = replies + 1, estimated_replies = estimated_replies + excluded.estimated_replies;
                INSERT INTO conversation_usage (conversation_id, input_tokens, output_tokens, replies, estimated_replies)
                SELECT m.conversation_id, coalesce(json_extract(m.usage, '$.input_tokens'), 0),
                       coalesce(json_extract(m.usage, '$.output_tokens'), 0), 1,
                       coalesce(json_extract(m.usage, '$.estimated'), 0)
                FROM messages m WHERE m.id = new.id
                ON CONFLICT (conversation_id) DO UPDATE SET
                    input_tokens = input_tokens + excluded.input_tokens,
                    output_tokens = output_tokens + excluded.output_tokens,
                    replies = replies + 1, estimated_replies = estimated_replies + excluded.estimated_replies;
            END;
            -- replies finished before this version: their stored usage where it has both counts, else
            -- an estimate of the output alone (0 input: the branches are not walked for old rows)
            INSERT INTO usage_daily (user_id, day, model, input_tokens, output_tokens, replies, estimated_replies)
            SELECT c.owner_id, m.updated_at / 86400000, coalesce(m.model, ''),
                   sum(coalesce(CASE WHEN json_valid(m.usage) THEN json_extract(m.usage, '$.input_tokens') END, 0)),
                   sum(coalesce(CASE WHEN json_valid(m.usage) THEN json_extract(m.usage, '$.output_tokens') END,
                                length(CAST(m.content AS BLOB)) / 4)),
                   count(*),
                   count(CASE WHEN NOT coalesce(CASE WHEN json_valid(m.usage)
                                                     THEN json_type(m.usage, '$.output_tokens') = 'integer' END, 0)
                              THEN 1 END)
            FROM messages m JOIN conversations c ON c.id = m.conversation_id
            WHERE m.role = 'assistant' AND m.status != 'streaming'
            GROUP BY c.owner_id, m.updated_at / 86400000, coalesce(m.model, '');
            INSERT INTO conversation_usage (conversation_id, input_tokens, output_tokens, replies, estimated_replies)
            SELECT m.conversation_id,
                   sum(coalesce(CASE WHEN json_valid(m.usage) THEN json_extract(m.usage, '$.input_tokens') END, 0)),
                   sum(coalesce(CASE WHEN json_valid(m.usage) THEN json_extract(m.usage, '$.output_tokens') END,
                                length(CAST(m.content AS BLOB)) / 4)),
                   count(*),
                   count(CASE WHEN NOT coalesce(CASE WHEN json_valid(m.usage)
                                                     THEN json_type(m.usage, '$.output_tokens') = 'integer' END, 0)
                              THEN 1 END)
            FROM messages m WHERE m.role = 'assistant' AND m.status != 'streaming'
            GROUP BY m.conversation_id;
            """),
        Migration(name: "v8_search_owned_by_user", sql: """
            -- Search scoped to the owner at the index (issue 17): with one shared trigram index, a
            -- term's rows were everyone's, so a user's MATCH walked other users' rows before the owner
            -- filter, and its cost and bm25's index-wide statistics told the user about other users'
            -- words. The tokenizer `parley_owned` (OwnedTrigramTokenizer, registered on every
            -- connection) prefixes each trigram with the owner, read from the indexed text's form
            -- `owner U+001F text`; a query's trigrams get the searching user's id. search_documents
            -- gets its owner too, so the short-query scan walks only the owner's documents.
            DROP TRIGGER search_message_added;
            DROP TRIGGER search_message_changed;
            DROP TRIGGER search_message_deleted;
            DROP TRIGGER search_title_added;
            DROP TRIGGER search_title_changed;
            DROP TRIGGER search_title_deleted;
            DROP TABLE search_index;
            ALTER TABLE search_documents ADD COLUMN owner_id TEXT NOT NULL DEFAULT '';
            UPDATE search_documents SET owner_id =
                coalesce((SELECT owner_id FROM conversations WHERE id = search_documents.conversation_id), '');
            CREATE INDEX search_documents_owner ON search_documents (owner_id, doc_id);
            CREATE VIRTUAL TABLE search_index USING fts5 (body, tokenize = 'parley_owned');

            CREATE TRIGGER search_message_added AFTER INSERT ON messages WHEN new.status <> 'streaming'
            BEGIN
                INSERT INTO search_documents (conversation_id, message_id, owner_id)
                SELECT new.conversation_id, new.id, owner_id FROM conversations WHERE id = new.conversation_id;
                INSERT INTO search_index (rowid, body)
                SELECT doc_id, owner_id || char(31) || replace(replace(new.content, char(57344), ''), char(57345), '')
                FROM search_documents WHERE message_id = new.id;
            END;
            CREATE TRIGGER search_message_changed AFTER UPDATE OF content, status ON messages
            WHEN old.status <> 'streaming' OR new.status <> 'streaming'
            BEGIN
                DELETE FROM search_index WHERE rowid = (SELECT doc_id FROM search_documents WHERE message_id = old.id);
                DELETE FROM search_documents WHERE message_id = old.id;
                INSERT INTO search_documents (conversation_id, message_id, owner_id)
                SELECT new.conversation_id, new.id, owner_id FROM conversations
                WHERE id = new.conversation_id AND new.status <> 'streaming';
                INSERT INTO search_index (rowid, body)
                SELECT doc_id, owner_id || char(31) || replace(replace(new.content, char(57344), ''), char(57345), '')
                FROM search_documents WHERE message_id = new.id;
            END;
            CREATE TRIGGER search_message_deleted AFTER DELETE ON messages WHEN old.status <> 'streaming'
            BEGIN
                DELETE FROM search_index WHERE rowid = (SELECT doc_id FROM search_documents WHERE message_id = old.id);
                DELETE FROM search_documents WHERE message_id = old.id;
            END;
            CREATE TRIGGER search_title_added AFTER INSERT ON conversations
            BEGIN
                INSERT INTO search_documents (conversation_id, message_id, owner_id) VALUES (new.id, NULL, new.owner_id);
                INSERT INTO search_index (rowid, body)
                SELECT doc_id, new.owner_id || char(31) || replace(replace(new.title, char(57344), ''), char(57345), '')
                FROM search_documents WHERE conversation_id = new.id AND message_id IS NULL;
            END;
            CREATE TRIGGER search_title_changed AFTER UPDATE OF title ON conversations WHEN old.title <> new.title
            BEGIN
                DELETE FROM search_index WHERE rowid =
                    (SELECT doc_id FROM search_documents WHERE conversation_id = old.id AND message_id IS NULL);
                INSERT INTO search_index (rowid, body)
                SELECT doc_id, new.owner_id || char(31) || replace(replace(new.title, char(57344), ''), char(57345), '')
                FROM search_documents WHERE conversation_id = new.id AND message_id IS NULL;
            END;
            CREATE TRIGGER search_title_deleted AFTER DELETE ON conversations
            BEGIN
                DELETE FROM search_index WHERE rowid =
                    (SELECT doc_id FROM search_documents WHERE conversation_id = old.id AND message_id IS NULL);
                DELETE FROM search_documents WHERE conversation_id = old.id AND message_id IS NULL;
            END;
            -- a conversation given to another user (local mode's, on the first start in team mode):
            -- its documents are indexed again under the new owner
            CREATE TRIGGER search_owner_changed AFTER UPDATE OF owner_id ON conversations
            WHEN old.owner_id <> new.owner_id
            BEGIN
                UPDATE search_documents SET owner_id = new.owner_id WHERE conversation_id = new.id;
                UPDATE search_index SET body = new.owner_id || char(31) || substr(body, instr(body, char(31)) + 1)
                WHERE rowid IN (SELECT doc_id FROM search_documents WHERE conversation_id = new.id);
            END;

            INSERT INTO search_index (rowid, body)
            SELECT d.doc_id, d.owner_id || char(31)
                   || replace(replace(coalesce(m.content, c.title), char(57344), ''), char(57345), '')
            FROM search_documents d
            LEFT JOIN messages m ON m.id = d.message_id
            LEFT JOIN conversations c ON c.id = d.conversation_id AND d.message_id IS NULL;
            """),
        Migration(name: "v9_bounded_token_totals", sql: """
            -- The triggers of v5 and v7 again, bounded (docs/api.md "Usage"): a reply's estimate is at most
            -- 1000000000 tokens (ReplyTokens.maximum; a provider's or an import's counts are bounded before
            -- they are written), and each total saturates at 9223372036854775807 instead of overflowing.
            -- In SQLite an integer `+` that overflows yields a REAL, and min() of that REAL and the largest
            -- integer is that integer, so the columns stay INTEGER. max(…, 0) mends a total that a
            -- provider's negative figure drove below 0 before this version. Rows are not rewritten: the
            -- store clamps what it reads (Store+Usage), so old values are harmless where they lie.
            DROP TRIGGER daily_output_on_finish;
            CREATE TRIGGER daily_output_on_finish AFTER UPDATE OF status ON messages
            WHEN old.status = 'streaming' AND new.status != 'streaming' AND new.role = 'assistant'
            BEGIN
                INSERT INTO daily_output (user_id, day, output_tokens)
                VALUES ((SELECT owner_id FROM conversations WHERE id = new.conversation_id),
                        new.updated_at / 86400000,
                        max(0, min(1000000000, coalesce(
                            CASE WHEN json_valid(new.usage) THEN json_extract(new.usage, '$.output_tokens') END,
                            length(CAST(new.content AS BLOB)) / 4))))
                ON CONFLICT (user_id, day) DO UPDATE SET
                    output_tokens = min(max(output_tokens, 0) + excluded.output_tokens, 9223372036854775807);
            END;
            DROP TRIGGER usage_on_finish;
            CREATE TRIGGER usage_on_finish AFTER UPDATE OF status ON messages
            WHEN old.status = 'streaming' AND new.status != 'streaming' AND new.role = 'assistant'
            BEGIN
                UPDATE messages SET usage = json_set(
                    CASE WHEN json_type(CASE WHEN json_valid(new.usage) THEN new.usage END) = 'object'
                         THEN new.usage ELSE '{}' END,
                    '$.input_tokens', coalesce(
                        CASE WHEN json_valid(new.usage) THEN json_extract(new.usage, '$.input_tokens') END,
                        min(1000000000,
                            ((SELECT coalesce(length(CAST(system_prompt AS BLOB)), 0) FROM conversations
                              WHERE id = new.conversation_id)
                             + (WITH RECURSIVE branch (id, parent_id, bytes) AS (
                                    SELECT id, parent_id, length(CAST(content AS BLOB)) FROM messages
                                    WHERE id = new.parent_id
                                    UNION ALL
                                    SELECT m.id, m.parent_id, length(CAST(m.content AS BLOB))
                                    FROM messages m JOIN branch ON m.id = branch.parent_id)
                                SELECT coalesce(sum(bytes), 0) FROM branch)) / 4)),
                    '$.output_tokens', coalesce(
                        CASE WHEN json_valid(new.usage) THEN json_extract(new.usage, '$.output_tokens') END,
                        min(1000000000, length(CAST(new.content AS BLOB)) / 4)),
                    '$.estimated', json('true'))
                -- (CASE, not AND: only CASE is sure not to run json_type on text that is not JSON)
                WHERE id = new.id AND NOT coalesce(CASE WHEN json_valid(new.usage) THEN
                    json_type(new.usage, '$.input_tokens') = 'integer'
                    AND json_type(new.usage, '$.output_tokens') = 'integer' END, 0);
                INSERT INTO usage_daily (user_id, day, model, input_tokens, output_tokens, replies, estimated_replies)
                SELECT c.owner_id, m.updated_at / 86400000, coalesce(m.model, ''),
                       max(0, min(1000000000, coalesce(json_extract(m.usage, '$.input_tokens'), 0))),
                       max(0, min(1000000000, coalesce(json_extract(m.usage, '$.output_tokens'), 0))), 1,
                       coalesce(json_extract(m.usage, '$.estimated'), 0)
                FROM messages m JOIN conversations c ON c.id = m.conversation_id WHERE m.id = new.id
                ON CONFLICT (user_id, day, model) DO UPDATE SET
                    input_tokens = min(max(input_tokens, 0) + excluded.input_tokens, 9223372036854775807),
                    output_tokens = min(max(output_tokens, 0) + excluded.output_tokens, 9223372036854775807),
                    replies = replies + 1, estimated_replies = estimated_replies + excluded.estimated_replies;
                INSERT INTO conversation_usage (conversation_id, input_tokens, output_tokens, replies, estimated_replies)
                SELECT m.conversation_id,
                       max(0, min(1000000000, coalesce(json_extract(m.usage, '$.input_tokens'), 0))),
                       max(0, min(1000000000, coalesce(json_extract(m.usage, '$.output_tokens'), 0))), 1,
                       coalesce(json_extract(m.usage, '$.estimated'), 0)
                FROM messages m WHERE m.id = new.id
                ON CONFLICT (conversation_id) DO UPDATE SET
                    input_tokens = min(max(input_tokens, 0) + excluded.input_tokens, 9223372036854775807),
                    output_tokens = min(max(output_tokens, 0) + excluded.output_tokens, 9223372036854775807),
                    replies = replies + 1, estimated_replies = estimated_replies + excluded.estimated_replies;
            END;
            """),
        Migration(name: "v10_plain_user_messages", sql: """
            -- Issue 18: user and system messages are shown exactly as typed (plain text), so only assistant
            -- replies keep HTML. The HTML older versions stored for them is dropped, and the index of messages
            -- still to be rendered holds only assistant replies (every user message has NULL html now).
            UPDATE messages SET html = NULL WHERE role <> 'assistant' AND html IS NOT NULL;
            DROP INDEX messages_without_html;
            CREATE INDEX messages_without_html ON messages (id) WHERE html IS NULL AND role = 'assistant';
            """),
        Migration(name: "v11_user_preferences", sql: """
            -- preferences per user (GET/PATCH /api/preferences): the page's theme, what sends a message,
            -- and the model and system prompt of new conversations. No row: the defaults. Not a foreign
            -- key: local mode's user ('local') has no row in users.
            CREATE TABLE user_preferences (
                user_id               TEXT PRIMARY KEY NOT NULL,
                theme                 TEXT NOT NULL DEFAULT 'system',
                default_model         TEXT,
                default_system_prompt TEXT,
                send_key              TEXT NOT NULL DEFAULT 'enter',
                updated_at            INTEGER NOT NULL      -- milliseconds since 1970
            ) WITHOUT ROWID;
            -- a conversation made by POST /api/import (the page marks it); earlier imports are not known
            ALTER TABLE conversations ADD COLUMN imported INTEGER NOT NULL DEFAULT 0;
            """),
    ]
}
