extension PostgresMigration {
    /// 2: the token counters and their triggers: SQLite's v5 and v7 in their bounded form (v9).
    ///
    /// SQLite's `json_valid`/`json_extract`/`json_type`/`json_set` become `parley_json` (NULL for text
    /// that is not JSON), `->`, `parley_json_count` and jsonb's `||`. The two engines differ only on
    /// usage no Parley build writes (its counts are integers, bounded before they are written): a
    /// count that is a JSON real is truncated and one that is a string counts as absent here, and a
    /// usage that gets an estimate is stored as jsonb renders it (`{"a": 1}`, jsonb's key order).
    static let usage = PostgresMigration(version: 2, name: "usage_counters", sql: """
        -- the text as JSON, NULL when it is not JSON (SQLite's json_valid); the text must also be valid
        -- jsonb (no \\u0000), as the estimate is written through jsonb. Its exception block costs a
        -- subtransaction (13 µs a call where a cast costs 2), so reads use `messages.usage_json`.
        CREATE FUNCTION parley_json(value TEXT) RETURNS JSON LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
        BEGIN
            PERFORM CAST(value AS JSONB);
            RETURN CAST(value AS JSON);
        EXCEPTION WHEN data_exception THEN
            RETURN NULL;
        END $$;
        -- the usage parsed once, when it is written: what the usage sums read (json_valid/json_extract
        -- per row on SQLite) without parsing each row's text again. PostgreSQL only.
        ALTER TABLE messages ADD COLUMN usage_json JSONB GENERATED ALWAYS AS (CAST(parley_json(usage) AS JSONB)) STORED;
        -- json_type(value) = 'integer': a JSON number written without fraction or exponent
        CREATE FUNCTION parley_json_is_integer(value JSON) RETURNS BOOLEAN LANGUAGE sql IMMUTABLE AS $$
            SELECT coalesce(json_typeof(value) = 'number' AND value::TEXT ~ '^-?[0-9]+$', FALSE)
        $$;
        -- json_extract(...) as a number: a JSON number, true 1, false 0, anything else NULL
        CREATE FUNCTION parley_json_count(value JSON) RETURNS NUMERIC LANGUAGE sql IMMUTABLE AS $$
            SELECT CASE json_typeof(value) WHEN 'number' THEN value::TEXT::NUMERIC
                                           WHEN 'boolean' THEN CASE WHEN value::TEXT = 'true' THEN 1 ELSE 0 END END
        $$;
        -- the same for a jsonb value (`usage_json -> key`)
        CREATE FUNCTION parley_jsonb_count(value JSONB) RETURNS NUMERIC LANGUAGE sql IMMUTABLE AS $$
            SELECT CASE jsonb_typeof(value) WHEN 'number' THEN value::TEXT::NUMERIC
                                            WHEN 'boolean' THEN CASE WHEN value::TEXT = 'true' THEN 1 ELSE 0 END END
        $$;
        -- the value kept by json_set: NULL for an absent key or JSON null (coalesce then estimates)
        CREATE FUNCTION parley_json_value(value JSON) RETURNS JSONB LANGUAGE sql IMMUTABLE AS $$
            SELECT CASE WHEN json_typeof(value) <> 'null' THEN value::JSONB END
        $$;
        -- max(0, min(1000000000, coalesce(count, 0))): one reply's bounded count (ReplyTokens.maximum)
        CREATE FUNCTION parley_bounded_count(value JSON) RETURNS BIGINT LANGUAGE sql IMMUTABLE AS $$
            SELECT trunc(GREATEST(0, LEAST(1000000000, coalesce(parley_json_count(value), 0))))::BIGINT
        $$;
        -- min(max(total, 0) + added, 9223372036854775807): a total saturates instead of overflowing
        CREATE FUNCTION parley_saturating_add(total BIGINT, added BIGINT) RETURNS BIGINT LANGUAGE sql IMMUTABLE AS $$
            SELECT LEAST(GREATEST(total, 0)::NUMERIC + added, 9223372036854775807)::BIGINT
        $$;

        -- output tokens per user and UTC day, for PARLEY_USER_DAILY_OUTPUT_TOKENS; deleting the
        -- conversation later does not give the budget back
        CREATE TABLE daily_output (
            user_id         TEXT NOT NULL,
            day             BIGINT NOT NULL,    -- days since 1970 (UTC)
            output_tokens   BIGINT NOT NULL,
            PRIMARY KEY (user_id, day)
        );
        -- tokens per user, UTC day and model, for GET /api/usage and the admin's totals
        CREATE TABLE usage_daily (
            user_id           TEXT NOT NULL,
            day               BIGINT NOT NULL,    -- days since 1970 (UTC)
            model             TEXT NOT NULL,      -- '' when the reply had none
            input_tokens      BIGINT NOT NULL,
            output_tokens     BIGINT NOT NULL,
            replies           BIGINT NOT NULL,    -- reply runs (a continue is a run of its own)
            estimated_replies BIGINT NOT NULL,    -- runs whose provider gave no usage
            PRIMARY KEY (user_id, day, model)
        );
        -- the same totals per conversation, shown in its JSON; gone with the conversation
        CREATE TABLE conversation_usage (
            conversation_id   TEXT PRIMARY KEY NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
            input_tokens      BIGINT NOT NULL,
            output_tokens     BIGINT NOT NULL,
            replies           BIGINT NOT NULL,
            estimated_replies BIGINT NOT NULL
        );

        -- the provider's reported output_tokens for the run; without usage, the text's UTF-8 bytes / 4
        CREATE FUNCTION parley_daily_output_on_finish() RETURNS TRIGGER LANGUAGE plpgsql AS $$
        BEGIN
            INSERT INTO daily_output (user_id, day, output_tokens)
            VALUES ((SELECT owner_id FROM conversations WHERE id = NEW.conversation_id),
                    NEW.updated_at / 86400000,
                    trunc(GREATEST(0, LEAST(1000000000, coalesce(
                        parley_json_count(parley_json(NEW.usage) -> 'output_tokens'),
                        octet_length(NEW.content) / 4))))::BIGINT)
            ON CONFLICT (user_id, day) DO UPDATE SET
                output_tokens = parley_saturating_add(daily_output.output_tokens, excluded.output_tokens);
            RETURN NULL;
        END $$;
        CREATE TRIGGER daily_output_on_finish AFTER UPDATE OF status ON messages FOR EACH ROW
        WHEN (OLD.status = 'streaming' AND NEW.status <> 'streaming' AND NEW.role = 'assistant')
        EXECUTE FUNCTION parley_daily_output_on_finish();

        -- When a reply run stops streaming: a reply whose provider reported no usage (or only half of
        -- it) gets an estimate, UTF-8 bytes / 4 (input: the system prompt and the branch above the
        -- reply), marked "estimated" (other fields are kept); then the run is added to both totals.
        -- Same transaction as the final write.
        CREATE FUNCTION parley_usage_on_finish() RETURNS TRIGGER LANGUAGE plpgsql AS $$
        DECLARE
            reported JSON := parley_json(NEW.usage);
            counted JSON;
        BEGIN
            IF NOT coalesce(json_typeof(reported) = 'object'
                            AND parley_json_is_integer(reported -> 'input_tokens')
                            AND parley_json_is_integer(reported -> 'output_tokens'), FALSE) THEN
                UPDATE messages SET usage = (
                    CASE WHEN json_typeof(reported) = 'object' THEN reported::JSONB ELSE '{}'::JSONB END
                    || jsonb_build_object(
                        'input_tokens', coalesce(
                            parley_json_value(CASE WHEN json_typeof(reported) = 'object' THEN reported -> 'input_tokens' END),
                            to_jsonb(LEAST(1000000000, (
                                (SELECT coalesce(octet_length(system_prompt), 0) FROM conversations
                                 WHERE id = NEW.conversation_id)
                                + (WITH RECURSIVE branch (id, parent_id, bytes) AS (
                                       SELECT id, parent_id, octet_length(content) FROM messages
                                       WHERE id = NEW.parent_id
                                       UNION ALL
                                       SELECT m.id, m.parent_id, octet_length(m.content)
                                       FROM messages m JOIN branch ON m.id = branch.parent_id)
                                   SELECT coalesce(sum(bytes), 0) FROM branch))::BIGINT / 4))),
                        'output_tokens', coalesce(
                            parley_json_value(CASE WHEN json_typeof(reported) = 'object' THEN reported -> 'output_tokens' END),
                            to_jsonb(LEAST(1000000000, octet_length(NEW.content)::BIGINT / 4))),
                        'estimated', TRUE))::TEXT
                WHERE id = NEW.id;
            END IF;
            SELECT parley_json(usage) INTO counted FROM messages WHERE id = NEW.id;
            INSERT INTO usage_daily (user_id, day, model, input_tokens, output_tokens, replies, estimated_replies)
            SELECT c.owner_id, m.updated_at / 86400000, coalesce(m.model, ''),
                   parley_bounded_count(counted -> 'input_tokens'), parley_bounded_count(counted -> 'output_tokens'), 1,
                   coalesce(trunc(parley_json_count(counted -> 'estimated')), 0)::BIGINT
            FROM messages m JOIN conversations c ON c.id = m.conversation_id WHERE m.id = NEW.id
            ON CONFLICT (user_id, day, model) DO UPDATE SET
                input_tokens = parley_saturating_add(usage_daily.input_tokens, excluded.input_tokens),
                output_tokens = parley_saturating_add(usage_daily.output_tokens, excluded.output_tokens),
                replies = usage_daily.replies + 1,
                estimated_replies = usage_daily.estimated_replies + excluded.estimated_replies;
            INSERT INTO conversation_usage (conversation_id, input_tokens, output_tokens, replies, estimated_replies)
            VALUES (NEW.conversation_id,
                    parley_bounded_count(counted -> 'input_tokens'), parley_bounded_count(counted -> 'output_tokens'), 1,
                    coalesce(trunc(parley_json_count(counted -> 'estimated')), 0)::BIGINT)
            ON CONFLICT (conversation_id) DO UPDATE SET
                input_tokens = parley_saturating_add(conversation_usage.input_tokens, excluded.input_tokens),
                output_tokens = parley_saturating_add(conversation_usage.output_tokens, excluded.output_tokens),
                replies = conversation_usage.replies + 1,
                estimated_replies = conversation_usage.estimated_replies + excluded.estimated_replies;
            RETURN NULL;
        END $$;
        CREATE TRIGGER usage_on_finish AFTER UPDATE OF status ON messages FOR EACH ROW
        WHEN (OLD.status = 'streaming' AND NEW.status <> 'streaming' AND NEW.role = 'assistant')
        EXECUTE FUNCTION parley_usage_on_finish();
        """)
}
