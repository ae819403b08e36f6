import CSQLite

/// The FTS5 tokenizer `parley_owned` (migration 8): SQLite's trigram tokenizer with every token
/// prefixed by the id of the user who owns the text, so one user's search walks only that user's
/// rows. With one shared trigram index, a term's posting list held everyone's rows: the MATCH walked
/// them all before the owner filter, and both its cost and bm25's statistics told one user about
/// other users' words (issue 17).
///
/// Documents are indexed as `owner U+001F text` (the triggers of migration 8 write that form); the
/// owner part is not tokenized, only prefixed to each trigram of the rest. Query terms carry no
/// owner, so they take the connection's `queryOwner`, which `Store.search` sets for the length of one
/// read; a query with no owner set gets a token no document has, and matches nothing.
///
/// Concurrency contract: one per connection, registered when the connection opens, used only by the
/// thread that holds that connection (see `Database`). Not thread-safe, and needs not be.
final class OwnedTrigramTokenizer {
    /// The owner whose rows a MATCH on this connection may find; nil outside `Store.search`.
    var queryOwner: String?

    /// SQLite's own trigram tokenizer, which does the splitting and the case folding.
    fileprivate let trigram: fts5_tokenizer
    fileprivate let trigramContext: UnsafeMutableRawPointer?

    static let name = "parley_owned"
    /// Between the owner and the text of an indexed document, and between the owner and each token.
    /// User ids are ASCII letters and digits, so the first U+001F always ends the owner.
    static let separator: UInt8 = 0x1F

    private init(trigram: fts5_tokenizer, trigramContext: UnsafeMutableRawPointer?) {
        self.trigram = trigram
        self.trigramContext = trigramContext
    }

    /// Registers `parley_owned` and the auxiliary function `parley_match_counts` on `connection`.
    /// Must run before the connection first touches `search_index`.
    static func register(on connection: OpaquePointer) throws(StoreError) -> OwnedTrigramTokenizer {
        guard let api = fts5API(connection) else {
            throw StoreError.invalidConfiguration("this SQLite has no FTS5 (needed for search)")
        }
        var trigram = fts5_tokenizer()
        var trigramContext: UnsafeMutableRawPointer?
        guard let find = api.pointee.xFindTokenizer, let create = api.pointee.xCreateTokenizer,
              find(api, "trigram", &trigramContext, &trigram) == SQLITE_OK else {
            throw StoreError.invalidConfiguration("this SQLite's FTS5 has no trigram tokenizer (SQLite 3.34 or newer)")
        }
        let tokenizer = OwnedTrigramTokenizer(trigram: trigram, trigramContext: trigramContext)
        var owned = fts5_tokenizer(xCreate: createInstance, xDelete: deleteInstance, xTokenize: tokenize)
        // FTS5 keeps a reference for the connection's life and gives it back to `release` at close.
        let retained = Unmanaged.passRetained(tokenizer).toOpaque()
        guard create(api, name, retained, &owned, release) == SQLITE_OK else {
            Unmanaged<OwnedTrigramTokenizer>.fromOpaque(retained).release()
            throw StoreError.from(connection: connection, code: SQLITE_ERROR)
        }
        try MatchCounts.register(api: api, connection: connection)
        return tokenizer
    }

    /// The connection's `fts5_api`, fetched the documented way (`SELECT fts5(?1)` with a bound pointer).
    private static func fts5API(_ connection: OpaquePointer) -> UnsafeMutablePointer<fts5_api>? {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(connection, "SELECT fts5(?1)", -1, &statement, nil) == SQLITE_OK else {
            sqlite3_finalize(statement)
            return nil
        }
        defer { sqlite3_finalize(statement) }
        var api: UnsafeMutablePointer<fts5_api>?
        withUnsafeMutablePointer(to: &api) { pointer in
            _ = sqlite3_bind_pointer(statement, 1, pointer, "fts5_api_ptr", nil)
            _ = sqlite3_step(statement)
        }
        return api
    }

    /// One tokenizer of one FTS5 table: the trigram instance it wraps.
    fileprivate final class Instance {
        let owner: OwnedTrigramTokenizer
        let trigram: OpaquePointer

        init(owner: OwnedTrigramTokenizer, trigram: OpaquePointer) {
            self.owner = owner
            self.trigram = trigram
        }
    }

    /// Where the wrapped tokenizer's tokens go: prefixed with the owner, then to FTS5's callback.
    fileprivate final class Sink {
        var token: [UInt8]
        let prefixLength: Int
        /// Added to the trigram's offsets, which count from the start of the text after the owner.
        let offset: Int32
        let context: UnsafeMutableRawPointer?
        let emit: TokenCallback

        init(owner: some Collection<UInt8>, offset: Int32, context: UnsafeMutableRawPointer?, emit: @escaping TokenCallback) {
            token = Array(owner)
            token.append(OwnedTrigramTokenizer.separator)
            prefixLength = token.count
            self.offset = offset
            self.context = context
            self.emit = emit
        }
    }

    fileprivate typealias TokenCallback = @convention(c) (
        UnsafeMutableRawPointer?, Int32, UnsafePointer<CChar>?, Int32, Int32, Int32
    ) -> Int32
}

// MARK: - FTS5 callbacks

private func release(_ context: UnsafeMutableRawPointer?) {
    guard let context else { return }
    Unmanaged<OwnedTrigramTokenizer>.fromOpaque(context).release()
}

private func createInstance(
    _ context: UnsafeMutableRawPointer?, _ arguments: UnsafeMutablePointer<UnsafePointer<CChar>?>?, _ count: Int32,
    _ out: UnsafeMutablePointer<OpaquePointer?>?
) -> Int32 {
    guard let context, let out, let create = Unmanaged<OwnedTrigramTokenizer>.fromOpaque(context)
        .takeUnretainedValue().trigram.xCreate else { return SQLITE_ERROR }
    let owner = Unmanaged<OwnedTrigramTokenizer>.fromOpaque(context).takeUnretainedValue()
    var trigram: OpaquePointer?
    // The table's tokenizer arguments (none today) are the trigram tokenizer's options.
    let rc = create(owner.trigramContext, arguments, count, &trigram)
    guard rc == SQLITE_OK, let trigram else { return rc == SQLITE_OK ? SQLITE_ERROR : rc }
    out.pointee = OpaquePointer(Unmanaged.passRetained(OwnedTrigramTokenizer.Instance(owner: owner, trigram: trigram))
        .toOpaque())
    return SQLITE_OK
}

private func deleteInstance(_ pointer: OpaquePointer?) {
    guard let pointer else { return }
    let instance = Unmanaged<OwnedTrigramTokenizer.Instance>.fromOpaque(UnsafeRawPointer(pointer)).takeRetainedValue()
    instance.owner.trigram.xDelete?(instance.trigram)
}

private func tokenize(
    _ pointer: OpaquePointer?, _ context: UnsafeMutableRawPointer?, _ flags: Int32,
    _ text: UnsafePointer<CChar>?, _ length: Int32, _ emit: OwnedTrigramTokenizer.TokenCallback?
) -> Int32 {
    guard let pointer, let emit else { return SQLITE_ERROR }
    let instance = Unmanaged<OwnedTrigramTokenizer.Instance>.fromOpaque(UnsafeRawPointer(pointer)).takeUnretainedValue()
    guard let split = instance.owner.trigram.xTokenize else { return SQLITE_ERROR }
    guard let text, length > 0 else { return SQLITE_OK }
    let bytes = UnsafeRawBufferPointer(start: text, count: Int(length))
    if flags & FTS5_TOKENIZE_QUERY != 0 {
        // A query term: the connection's owner, or (none set) a token that no document has.
        let owner = Array((instance.owner.queryOwner ?? "").utf8)
        let sink = OwnedTrigramTokenizer.Sink(owner: owner, offset: 0, context: context, emit: emit)
        if owner.isEmpty {
            return sink.token.withUnsafeBufferPointer { token in
                token.withMemoryRebound(to: CChar.self) { emit(context, 0, $0.baseAddress, Int32($0.count), 0, length) }
            }
        }
        return withExtendedLifetime(sink) {
            split(instance.trigram, Unmanaged.passUnretained(sink).toOpaque(), flags, text, length, forward)
        }
    }
    // A document (or its deletion): `owner U+001F text`; a text without an owner is not indexed.
    guard let end = bytes.firstIndex(of: OwnedTrigramTokenizer.separator), end > 0 else { return SQLITE_OK }
    let start = end + 1
    let sink = OwnedTrigramTokenizer.Sink(owner: bytes[..<end], offset: Int32(start), context: context, emit: emit)
    return withExtendedLifetime(sink) {
        split(instance.trigram, Unmanaged.passUnretained(sink).toOpaque(), flags, text + start,
              length - Int32(start), forward)
    }
}

/// The wrapped trigram tokenizer's callback: the owner's prefix and the token, to FTS5.
private func forward(
    _ context: UnsafeMutableRawPointer?, _ flags: Int32, _ token: UnsafePointer<CChar>?, _ length: Int32,
    _ start: Int32, _ end: Int32
) -> Int32 {
    guard let context else { return SQLITE_ERROR }
    let sink = Unmanaged<OwnedTrigramTokenizer.Sink>.fromOpaque(context).takeUnretainedValue()
    sink.token.removeSubrange(sink.prefixLength...)
    if let token, length > 0 {
        sink.token.append(contentsOf: UnsafeRawBufferPointer(start: token, count: Int(length)))
    }
    return sink.token.withUnsafeBufferPointer { bytes in
        bytes.withMemoryRebound(to: CChar.self) {
            sink.emit(sink.context, flags, $0.baseAddress, Int32($0.count), start + sink.offset, end + sink.offset)
        }
    }
}
