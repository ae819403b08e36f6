import CSQLite

/// One BLOB value opened with SQLite's incremental I/O (`sqlite3_blob_open`): bytes are read and
/// written in place, a chunk at a time, so a 20 MB file is never one allocation. Writes go into a
/// value made with `zeroblob(n)` (incremental I/O cannot change a value's size).
///
/// Not thread-safe: valid only while its connection is held, inside the transaction that opened it.
final class IncrementalBlob {
    private let handle: OpaquePointer
    private let connection: OpaquePointer
    /// The value's size in bytes.
    let count: Int

    /// Opens column `column` of row `row` in `table` of the connection's main database.
    init(_ database: SQLiteDatabase, table: String, column: String, row: Int64, writable: Bool) throws(StoreError) {
        var handle: OpaquePointer?
        let rc = sqlite3_blob_open(database.handle, "main", table, column, row, writable ? 1 : 0, &handle)
        guard rc == SQLITE_OK, let handle else {
            sqlite3_blob_close(handle)
            throw StoreError.from(connection: database.handle, code: rc)
        }
        self.handle = handle
        self.connection = database.handle
        self.count = Int(sqlite3_blob_bytes(handle))
    }

    deinit {
        sqlite3_blob_close(handle)
    }

    /// Fills `buffer` with the bytes at `offset` (the caller keeps `offset + buffer.count <= count`).
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int) throws(StoreError) {
        guard let base = buffer.baseAddress, !buffer.isEmpty else { return }
        let rc = sqlite3_blob_read(handle, base, Int32(buffer.count), Int32(offset))
        guard rc == SQLITE_OK else { throw StoreError.from(connection: connection, code: rc) }
    }

    /// Writes `bytes` at `offset` (the caller keeps `offset + bytes.count <= count`).
    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int) throws(StoreError) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        let rc = sqlite3_blob_write(handle, base, Int32(bytes.count), Int32(offset))
        guard rc == SQLITE_OK else { throw StoreError.from(connection: connection, code: rc) }
    }

    /// Writes all of `bytes` at `offset` (a small value given whole, like a thumbnail).
    func write(_ bytes: [UInt8], at offset: Int) throws(StoreError) {
        let rc = bytes.withUnsafeBytes { buffer -> Int32 in
            guard let base = buffer.baseAddress, !buffer.isEmpty else { return SQLITE_OK }
            return sqlite3_blob_write(handle, base, Int32(buffer.count), Int32(offset))
        }
        guard rc == SQLITE_OK else { throw StoreError.from(connection: connection, code: rc) }
    }

    /// `count` bytes at `offset` as an array (fewer when the value ends first).
    func read(count wanted: Int, at offset: Int) throws(StoreError) -> [UInt8] {
        let count = max(0, min(wanted, self.count - offset))
        guard count > 0 else { return [] }
        var failure: StoreError?
        let bytes = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            do throws(StoreError) {
                try read(into: UnsafeMutableRawBufferPointer(buffer), at: offset)
                initialized = count
            } catch {
                failure = error
                initialized = 0
            }
        }
        if let failure { throw failure }
        return bytes
    }
}
