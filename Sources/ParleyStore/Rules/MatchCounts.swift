import CSQLite

/// What one matching row says about the query, for `SearchRanking`: its length in tokens and how
/// often each phrase of the query occurs in it. Read by the FTS5 auxiliary function
/// `parley_match_counts(search_index)`, which answers `"length count0 count1 …"`.
///
/// Why not bm25(): its statistics (row count, average length, rows per term) are the whole index's,
/// every user's text together, so the order of one user's results told them which words other users
/// wrote. These counts are the row's own; `SearchRanking` derives the rest from the caller's rows.
struct MatchCounts: Sendable, Equatable {
    /// Tokens (trigrams) in the row.
    var length: Int
    /// Occurrences of each of the query's phrases, in the query's order.
    var phrases: [Int]

    static let functionName = "parley_match_counts"

    init(length: Int, phrases: [Int]) {
        self.length = length
        self.phrases = phrases
    }

    /// Parses the function's answer; nil for anything else.
    init?(_ text: String) {
        let numbers = text.split(separator: " ").compactMap { Int($0) }
        guard let length = numbers.first, numbers.allSatisfy({ $0 >= 0 }) else { return nil }
        self.length = length
        phrases = Array(numbers.dropFirst())
    }

    /// Registers `parley_match_counts` with the connection's FTS5 (`OwnedTrigramTokenizer.register`).
    static func register(api: UnsafeMutablePointer<fts5_api>, connection: OpaquePointer) throws(StoreError) {
        guard let create = api.pointee.xCreateFunction,
              create(api, functionName, nil, matchCounts, nil) == SQLITE_OK else {
            throw StoreError.from(connection: connection, code: SQLITE_ERROR)
        }
    }
}

/// The auxiliary function: the current row's token count and per-phrase hit counts, as text.
private func matchCounts(
    _ api: UnsafePointer<Fts5ExtensionApi>?, _ fts: OpaquePointer?, _ context: OpaquePointer?, _ count: Int32,
    _ values: UnsafeMutablePointer<OpaquePointer?>?
) {
    guard let api, let fts, let phraseCount = api.pointee.xPhraseCount, let columnSize = api.pointee.xColumnSize,
          let instanceCount = api.pointee.xInstCount, let instance = api.pointee.xInst else {
        sqlite3_result_error(context, "parley_match_counts: FTS5 API incomplete", -1)
        return
    }
    var length: Int32 = 0
    var instances: Int32 = 0
    guard columnSize(fts, -1, &length) == SQLITE_OK, instanceCount(fts, &instances) == SQLITE_OK else {
        sqlite3_result_error(context, "parley_match_counts: no counts for this row", -1)
        return
    }
    var phrases = [Int](repeating: 0, count: Int(max(phraseCount(fts), 0)))
    for index in 0..<instances {
        var phrase: Int32 = 0, column: Int32 = 0, offset: Int32 = 0
        guard instance(fts, index, &phrase, &column, &offset) == SQLITE_OK else { continue }
        if phrases.indices.contains(Int(phrase)) { phrases[Int(phrase)] += 1 }
    }
    let text = ([Int(length)] + phrases).map(String.init).joined(separator: " ")
    sqlite3_result_text(context, text, -1, parley_sqlite_transient())
}
