/// Indexes the search documents the triggers queued in `search_pending` (migration 6), in the
/// writer's transaction just before its `COMMIT`: the trigrams that plpgsql made with a window over
/// every character (`parley_search_trigrams`, most of PostgreSQL's CPU for a start) are made here.
///
/// They are the same set: PostgreSQL lowers the body (its own `lower()`, under the database's
/// locale), and this type takes every window of 3 code points of that text, distinct, each prefixed
/// by the owner and U+001F. Only their order in the array differs (GIN and `@>` do not read it).
struct PostgresSearchIndexer: Sendable {
    /// Takes the queue: every document this transaction queued, and any a write outside the store left.
    static let takeQueued = "DELETE FROM search_pending RETURNING doc_id, owner_id, body, lower(body)"
    /// Writes a batch of index rows: ids, bodies and trigram arrays (each an array literal) side by side.
    static let insert = """
        INSERT INTO search_index (doc_id, body, trigrams)
        SELECT u.doc, u.body, CAST(u.trigrams AS TEXT[])
        FROM unnest(CAST(?1 AS BIGINT[]), CAST(?2 AS TEXT[]), CAST(?3 AS TEXT[])) AS u (doc, body, trigrams)
        ON CONFLICT (doc_id) DO UPDATE SET body = excluded.body, trigrams = excluded.trigrams
        """
    /// Documents per `insert` (a bulk write queues thousands; this bounds one statement's parameters).
    static let batch = 500

    /// Indexes every queued document on `database`, inside its open write transaction: one statement
    /// takes the queue, one more per `batch` documents writes their rows.
    func indexQueued(on database: any Database) throws(StoreError) {
        let queued = try database.query(Self.takeQueued, []) { row in
            (doc: row.int64(0), owner: row.text(1), body: row.text(2), lowered: row.text(3))
        }
        var start = 0
        while start < queued.count {
            let documents = queued[start..<min(start + Self.batch, queued.count)]
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
            start += Self.batch
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
