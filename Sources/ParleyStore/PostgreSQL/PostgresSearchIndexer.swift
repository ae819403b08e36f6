/// Indexes the search documents the triggers queued in `search_pending` (migration 6), in the
/// writer's transaction just before its `COMMIT`: the trigrams that plpgsql made with a window over
/// every character (`parley_search_trigrams`, most of PostgreSQL's CPU for a start) are made here.
///
/// They are the same set: PostgreSQL lowers the body (its own `lower()`, under the database's
/// locale), and this type takes every window of 3 code points of that text, distinct, each prefixed
/// by the owner and U+001F. Only their order in the array differs (GIN and `@>` do not read it).
struct PostgresSearchIndexer: Sendable {
    /// Takes up to `?1` queued documents, newest first: this transaction's own (newest, and locked by
    /// it alone) and any that a write outside the store left. `SKIP LOCKED`: a document another
    /// transaction is indexing is its to index; two writers never wait on each other here. Walks the
    /// primary key backwards, so the queue's dead rows before a vacuum are not read.
    static let takeQueued = """
        DELETE FROM search_pending WHERE doc_id IN (
            SELECT doc_id FROM search_pending ORDER BY doc_id DESC LIMIT ?1 FOR UPDATE SKIP LOCKED)
        RETURNING doc_id, owner_id, body, lower(body)
        """
    /// Writes a batch of index rows: ids, bodies and trigram arrays (each an array literal) side by side.
    static let insert = """
        INSERT INTO search_index (doc_id, body, trigrams)
        SELECT u.doc, u.body, CAST(u.trigrams AS TEXT[])
        FROM unnest(CAST(?1 AS BIGINT[]), CAST(?2 AS TEXT[]), CAST(?3 AS TEXT[])) AS u (doc, body, trigrams)
        ON CONFLICT (doc_id) DO UPDATE SET body = excluded.body, trigrams = excluded.trigrams
        """
    /// Documents taken and written per statement (a bulk write queues thousands; this bounds one
    /// statement's parameters and the memory they take).
    let batch: Int

    init(batch: Int = 500) {
        self.batch = max(batch, 1)
    }

    /// Indexes every queued document on `database`, inside its open write transaction, `batch` at a
    /// time: two statements a batch, and one to find the queue empty after a full batch.
    func indexQueued(on database: any Database) throws(StoreError) {
        while true {
            let documents = try database.query(Self.takeQueued, [.integer(Int64(batch))]) { row in
                (doc: row.int64(0), owner: row.text(1), body: row.text(2), lowered: row.text(3))
            }
            guard !documents.isEmpty else { return }
            var bodies = PostgresArrayLiteral()
            var trigrams = PostgresArrayLiteral()
            for document in documents {
                bodies.append(document.body)
                trigrams.append(Self.trigrams(owner: document.owner, lowered: document.lowered))
            }
            try database.run(Self.insert, [
                .text("{" + documents.map { String($0.doc) }.joined(separator: ",") + "}"),
                .text(bodies.text), .text(trigrams.text),
            ])
            guard documents.count == batch else { return }
        }
    }

    /// Every distinct window of 3 code points of `lowered`, each as `owner U+001F window`, as a
    /// PostgreSQL array literal.
    static func trigrams(owner: String, lowered: String) -> String {
        let scalars = Array(lowered.unicodeScalars)
        var literal = PostgresArrayLiteral()
        guard scalars.count >= 3 else { return literal.text }
        let prefix = Array(owner.utf8) + [0x1F]
        var seen = Set<UInt64>(minimumCapacity: scalars.count - 2)
        for index in 0..<(scalars.count - 2) {
            // A code point fits in 21 bits: three of them are one key.
            let key = UInt64(scalars[index].value) << 42 | UInt64(scalars[index + 1].value) << 21
                | UInt64(scalars[index + 2].value)
            guard seen.insert(key).inserted else { continue }
            literal.append(prefix: prefix, scalars[index], scalars[index + 1], scalars[index + 2])
        }
        return literal.text
    }
}
