import Foundation
@testable import ParleyStore
import XCTest

/// `PostgresDatabase` against a real PostgreSQL: `PARLEY_TEST_POSTGRES_URL` (from
/// `scripts/postgres-test-server.sh start DIR`). Without it these tests skip, unless
/// `PARLEY_REQUIRE_POSTGRES=1` says the run must cover PostgreSQL: then they fail. Each test works in
/// a schema of its own (the session's `search_path`), dropped afterwards, so runs can share a database.
final class PostgresDatabaseTests: XCTestCase {
    private var baseURL = ""
    private var schema = ""

    private struct MissingServer: Error, CustomStringConvertible {
        let description = "PARLEY_REQUIRE_POSTGRES=1 but PARLEY_TEST_POSTGRES_URL is not set: start a server with "
            + "`scripts/postgres-test-server.sh start DIR` and set the URL it prints"
    }

    override func setUpWithError() throws {
        let environment = ProcessInfo.processInfo.environment
        guard let url = environment["PARLEY_TEST_POSTGRES_URL"], !url.isEmpty else {
            if environment["PARLEY_REQUIRE_POSTGRES"] == "1" { throw MissingServer() }
            throw XCTSkip("PARLEY_TEST_POSTGRES_URL is not set")
        }
        baseURL = url
        schema = "test_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        try PostgresDatabase(url: url, applicationName: "parley-tests").execute("CREATE SCHEMA \(schema)")
    }

    override func tearDownWithError() throws {
        guard !schema.isEmpty else { return }
        try PostgresDatabase(url: baseURL, applicationName: "parley-tests").execute("DROP SCHEMA \(schema) CASCADE")
    }

    /// A new connection whose tables are the test's schema (kept across reconnects: it is in the URL).
    private func connect() throws -> PostgresDatabase {
        let separator = baseURL.contains("?") ? "&" : "?"
        return try PostgresDatabase(url: baseURL + separator + "options=-csearch_path%3D\(schema)",
                                    applicationName: "parley-tests")
    }

    private func sqlstate(of body: () throws -> Void, file: StaticString = #filePath, line: UInt = #line) -> String? {
        do {
            try body()
            XCTFail("expected a PostgreSQL error", file: file, line: line)
        } catch StoreError.postgres(let sqlstate, _) {
            return sqlstate
        } catch {
            XCTFail("expected a PostgreSQL error, got \(error)", file: file, line: line)
        }
        return nil
    }

    func testPlaceholdersBindInOrderAndNotInsideLiterals() throws {
        let database = try connect()
        let row = try database.queryFirst(
            "SELECT ?::text, '?' || 'it''s ?', ?2::bigint + ?1::bigint, ? AS \"odd?name\"",
            [.integer(40), .integer(2), .text("third")]
        ) { row in (row.text(0), row.text(1), row.int64(2), row.text(3)) }
        XCTAssertEqual(row?.0, "40")
        XCTAssertEqual(row?.1, "?it's ?")
        XCTAssertEqual(row?.2, 42)
        XCTAssertEqual(row?.3, "third")
    }

    func testNullIntegerRealAndTextRoundTrip() throws {
        let database = try connect()
        try database.execute("CREATE TABLE value (id bigint PRIMARY KEY, n bigint, r double precision, t text)")
        let integers: [Int64] = [0, -1, 42, .min, .max]
        let reals: [Double] = [0, -2.5, 0.1, .pi, 1e-300, 5e20, .greatestFiniteMagnitude, .leastNonzeroMagnitude,
                               .infinity, -.infinity]
        for (index, (integer, real)) in zip(integers + integers, reals).enumerated() {
            try database.run("INSERT INTO value VALUES (?, ?, ?, ?)",
                             [.integer(Int64(index)), .integer(integer), .real(real), .text("row \(index)")])
        }
        try database.run("INSERT INTO value VALUES (?, ?, ?, ?)", [.integer(99), .null, .null, .null])
        let read = try database.query("SELECT n, r, t FROM value WHERE id < 99 ORDER BY id") { row in
            (row.int64(0), row.optionalDouble(1), row.text(2))
        }
        XCTAssertEqual(read.map(\.0), Array((integers + integers).prefix(reals.count)))
        XCTAssertEqual(read.map(\.1), reals.map { Optional($0) }, "every Double reads back bit for bit")
        XCTAssertEqual(read.map(\.2), reals.indices.map { "row \($0)" })
        let nulls = try database.queryFirst("SELECT n, r, t FROM value WHERE id = 99") { row in
            (row.isNull(0), row.optionalInt64(0), row.optionalDouble(1), row.optionalText(2), row.text(2), row.int64(0))
        }
        XCTAssertEqual(nulls?.0, true)
        XCTAssertNil(nulls?.1 ?? nil)
        XCTAssertNil(nulls?.2 ?? nil)
        XCTAssertNil(nulls?.3 ?? nil)
        XCTAssertEqual(nulls?.4, "", "NULL reads as empty text, as on SQLite")
        XCTAssertEqual(nulls?.5, 0)
        let nan = try database.queryFirst("SELECT ?::double precision", [.real(.nan)]) { $0.optionalDouble(0) }
        XCTAssertEqual(nan??.isNaN, true)
        let flags = try database.queryFirst("SELECT true, false") { row in (row.int64(0), row.int64(1)) }
        XCTAssertEqual(flags?.0, 1)
        XCTAssertEqual(flags?.1, 0)
    }

    func testUTF8TextRoundTripsWhole() throws {
        let database = try connect()
        try database.execute("CREATE TABLE note (id bigint PRIMARY KEY, body text NOT NULL)")
        let samples = ["", "plain", "émoji 😀👩🏽‍💻 and CJK 漢字かな 한국어", "e\u{301} combining, \u{FEFF}BOM, RTL \u{202E}x",
                       String(repeating: "ab😀漢", count: 300_000)]  // 3 MB across character boundaries
        for (id, text) in samples.enumerated() {
            try database.run("INSERT INTO note VALUES (?, ?)", [.integer(Int64(id)), .text(text)])
        }
        let read = try database.query("SELECT body, octet_length(body) FROM note ORDER BY id") { row in
            (row.text(0), row.int64(1))
        }
        XCTAssertEqual(read.map(\.0), samples)
        XCTAssertEqual(read.map(\.1), samples.map { Int64($0.utf8.count) }, "stored as UTF-8, byte for byte")
    }

    func testBlobsRoundTripByteForByte() throws {
        let database = try connect()
        try database.execute("CREATE TABLE chunk (id bigint PRIMARY KEY, bytes bytea)")
        var generator = SystemRandomNumberGenerator()
        let blobs: [[UInt8]] = [[], [0], Array(0...255), (0..<1_000_000).map { _ in UInt8.random(in: 0...255, using: &generator) }]
        for (id, blob) in blobs.enumerated() {
            try database.run("INSERT INTO chunk VALUES (?, ?)", [.integer(Int64(id)), .blob(blob)])
        }
        try database.run("INSERT INTO chunk VALUES (?, ?)", [.integer(9), .null])
        let read = try database.query("SELECT bytes, octet_length(bytes) FROM chunk ORDER BY id") { row in
            (row.optionalBytes(0), row.optionalInt64(1))
        }
        XCTAssertEqual(read.map(\.0), blobs.map { Optional($0) } + [nil])
        XCTAssertEqual(read.map(\.1), blobs.map { Optional(Int64($0.count)) } + [nil], "stored whole, not cut at a zero byte")
        // A blob beside text parameters in one statement: each in its own format.
        let mixed = try database.queryFirst("SELECT ?::text, octet_length(?::bytea), ?::bigint",
                                            [.text("a"), .blob([0, 1, 2]), .integer(7)]) { row in
            (row.text(0), row.int64(1), row.int64(2))
        }
        XCTAssertEqual(mixed?.0, "a")
        XCTAssertEqual(mixed?.1, 3)
        XCTAssertEqual(mixed?.2, 7)
    }

    /// PostgreSQL's text cannot hold U+0000: it is stored escaped (`PostgresText`) and reads back exactly,
    /// as does the escape character itself, and neither is confused with the other.
    func testTextWithNULOrTheEscapeReadsBackExactly() throws {
        let database = try connect()
        try database.execute("CREATE TABLE note (id bigint, body text)")
        let texts = ["a\u{0}b", "\u{0}", "\u{E000}0", "\u{E000}", "x\u{E000}\u{E000}\u{0}\u{0}y", "\u{E000}\u{0}", "plain"]
        for (index, text) in texts.enumerated() {
            try database.run("INSERT INTO note VALUES (?, ?)", [.integer(Int64(index)), .text(text)])
        }
        let read = try database.query("SELECT body FROM note ORDER BY id", []) { $0.text(0) }
        XCTAssertEqual(read, texts)
        XCTAssertEqual(try database.queryFirst("SELECT id FROM note WHERE body = ?", [.text("\u{0}")]) { $0.int64(0) }, 1)
        XCTAssertEqual(try database.queryFirst("SELECT body FROM note WHERE id = 6", []) { $0.text(0) }, "plain")
    }

    func testRunCountsChangedRowsAndScriptsRunWhole() throws {
        let database = try connect()
        try database.execute("CREATE TABLE item (id bigint, done bigint); INSERT INTO item VALUES (1, 0), (2, 0), (3, 1)")
        XCTAssertEqual(try database.run("UPDATE item SET done = 1 WHERE done = ?", [.integer(0)]), 2)
        XCTAssertEqual(try database.run("DELETE FROM item WHERE id > ?", [.integer(5)]), 0)
        XCTAssertEqual(try database.query("SELECT id FROM item WHERE id <= ? ORDER BY id", [.integer(2)]) { $0.int64(0) },
                       [1, 2])
        XCTAssertNil(try database.queryFirst("SELECT id FROM item WHERE id = ?", [.integer(7)]) { $0.int64(0) })
    }

    func testTransactionCommitsOrRollsBackWhole() throws {
        let database = try connect()
        try database.execute("CREATE TABLE item (id bigint PRIMARY KEY)")
        try database.transaction(.immediate) { () throws(StoreError) -> Void in
            try database.run("INSERT INTO item VALUES (?)", [.integer(1)])
        }
        XCTAssertThrowsError(try database.transaction(.immediate) { () throws(StoreError) in
            try database.run("INSERT INTO item VALUES (?)", [.integer(2)])
            throw StoreError.conflict("changed my mind")
        }) { XCTAssertEqual($0 as? StoreError, .conflict("changed my mind")) }
        XCTAssertEqual(try database.query("SELECT id FROM item ORDER BY id") { $0.int64(0) }, [1])
        // A read transaction is read-only: a write in it is refused (SQLSTATE 25006).
        XCTAssertEqual(sqlstate {
            try database.transaction(.deferred) { () throws(StoreError) -> Void in try database.run("INSERT INTO item VALUES (3)") }
        }, "25006")
    }

    func testSwallowedStatementErrorNeverCommitsSilently() throws {
        let database = try connect()
        try database.execute("CREATE TABLE item (id bigint PRIMARY KEY)")
        XCTAssertEqual(sqlstate {
            try database.transaction(.immediate) { () throws(StoreError) in
                try database.run("INSERT INTO item VALUES (1)")
                _ = try? database.run("INSERT INTO item VALUES (1)")  // duplicate: aborts the transaction
            }
        }, "25P02")
        XCTAssertEqual(try database.queryFirst("SELECT count(*) FROM item") { $0.int64(0) }, 0)
        let nested = sqlstate {
            try database.transaction(.immediate) { () throws(StoreError) in try database.transaction(.immediate) {} }
        }
        XCTAssertEqual(nested, "25001", "no nested transactions, as on SQLite")
    }

    func testFailedSavepointKeepsTheTransaction() throws {
        let database = try connect()
        try database.execute("CREATE TABLE item (id bigint PRIMARY KEY)")
        let outcomes = try database.transaction(.immediate) { () throws(StoreError) in
            try database.run("INSERT INTO item VALUES (1)")
            let failed = try database.savepoint { () throws(StoreError) in
                try database.run("INSERT INTO item VALUES (2)")
                try database.run("INSERT INTO item VALUES (1)")  // unique violation
            }
            let thrown = try database.savepoint { () throws(StoreError) in
                try database.run("INSERT INTO item VALUES (4)")
                throw StoreError.conflict("not this one")
            }
            let kept = try database.savepoint { () throws(StoreError) in try database.run("INSERT INTO item VALUES (3)") }
            return (failed, thrown, kept)
        }
        guard case .failure(.postgres(let sqlstate, _)) = outcomes.0 else { return XCTFail("\(outcomes.0)") }
        XCTAssertEqual(sqlstate, "23505")
        guard case .failure(.conflict) = outcomes.1 else { return XCTFail("\(outcomes.1)") }
        guard case .success(1) = outcomes.2 else { return XCTFail("\(outcomes.2)") }
        XCTAssertEqual(try database.query("SELECT id FROM item ORDER BY id") { $0.int64(0) }, [1, 3])
    }

    func testErrorsCarrySQLSTATE() throws {
        let database = try connect()
        try database.execute("CREATE TABLE item (id bigint PRIMARY KEY)")
        XCTAssertEqual(sqlstate { try database.run("SELEC 1") }, "42601")
        XCTAssertEqual(sqlstate { try database.run("SELECT * FROM missing_table") }, "42P01")
        XCTAssertEqual(sqlstate { try database.execute("INSERT INTO item VALUES (1); INSERT INTO item VALUES (1)") },
                       "23505")
        XCTAssertEqual(sqlstate { try database.run("SELECT ?::bigint", [.text("nope")]) }, "22P02")
        // The connection goes on after each error.
        XCTAssertEqual(try database.queryFirst("SELECT count(*) FROM item") { $0.int64(0) }, 0)
    }

    func testReconnectsAfterTheSessionIsTerminated() throws {
        let database = try connect()
        try database.execute("CREATE TABLE item (id bigint)")
        let insert = "INSERT INTO item VALUES (?)"
        try database.run(insert, [.integer(1)])  // prepared on the first session
        let pid = try XCTUnwrap(database.queryFirst("SELECT pg_backend_pid()") { $0.int64(0) })
        let other = try connect()
        XCTAssertEqual(try other.queryFirst("SELECT pg_terminate_backend(?::int, 5000)", [.integer(pid)]) { $0.int64(0) }, 1)
        // The next call finds its session gone, reconnects and runs on the new one, re-prepared.
        try database.run(insert, [.integer(2)])
        let newPID = try XCTUnwrap(database.queryFirst("SELECT pg_backend_pid()") { $0.int64(0) })
        XCTAssertNotEqual(newPID, pid)
        XCTAssertEqual(try database.query("SELECT id FROM item ORDER BY id") { $0.int64(0) }, [1, 2])
    }

    func testAStatementPreparedBeforeItsTableChangedIsPreparedAgain() throws {
        let database = try connect()
        try database.execute("CREATE TABLE item (id bigint)")
        try database.run("INSERT INTO item VALUES (1)")
        let select = "SELECT * FROM item"
        XCTAssertEqual(try database.query(select) { $0.int64(0) }, [1])
        // Another connection (a node migrating) adds a column: the prepared plan's result type changed.
        try connect().execute("ALTER TABLE item ADD COLUMN label text DEFAULT 'new'")
        XCTAssertEqual(try database.query(select) { $0.text(1) }, ["new"])
    }

    func testSessionLostInsideATransactionFailsAsUnavailable() throws {
        let database = try connect()
        try database.execute("CREATE TABLE item (id bigint)")
        let other = try connect()
        XCTAssertThrowsError(try database.transaction(.immediate) { () throws(StoreError) in
            try database.run("INSERT INTO item VALUES (1)")
            let pid = try database.queryFirst("SELECT pg_backend_pid()") { $0.int64(0) } ?? 0
            _ = try other.queryFirst("SELECT pg_terminate_backend(?::int, 5000)", [.integer(pid)]) { $0.int64(0) }
            try database.run("INSERT INTO item VALUES (2)")
        }) { error in
            guard case .unavailable = error as? StoreError else { return XCTFail("\(error)") }
        }
        // Nothing of it was committed, and the connection works again.
        XCTAssertEqual(try database.queryFirst("SELECT count(*) FROM item") { $0.int64(0) }, 0)
    }

    func testUnreachableServerIsUnavailableAndThePasswordIsNeverShown() throws {
        let url = "postgres://parley:s3cr%3Ft@127.0.0.1:1/parley"
        XCTAssertThrowsError(try PostgresDatabase(url: url, applicationName: "parley-tests")) { error in
            guard case .unavailable(let why) = error as? StoreError else { return XCTFail("\(error)") }
            XCTAssertTrue(why.contains("postgres://parley@127.0.0.1:1/parley"), why)
            XCTAssertFalse("\(error)".contains("s3cr"), "\(error)")
        }
        XCTAssertThrowsError(try PostgresDatabase(url: "mysql://parley@127.0.0.1/parley", applicationName: "x")) { error in
            guard case .invalidConfiguration = error as? StoreError else { return XCTFail("\(error)") }
        }
    }

    func testAdvisoryLockExcludesAnotherConnection() throws {
        let key = Int64.random(in: 1...Int64.max)
        let holder = try connect()
        let other = ExclusiveAccess(try connect())
        let tryLock = "SELECT pg_try_advisory_lock(?::bigint)"
        let order = Order()
        let waiterDone = DispatchSemaphore(value: 0)
        try holder.withAdvisoryLock(key: key) { () throws(StoreError) in
            XCTAssertEqual(try other.withLock { (database) throws(StoreError) in try database.queryFirst(tryLock, [.integer(key)]) { $0.int64(0) } }, 0)
            Thread.detachNewThread {
                try? other.withLock { database throws(StoreError) in
                    try database.withAdvisoryLock(key: key) { order.append("waiter") }
                }
                waiterDone.signal()
            }
            Thread.sleep(forTimeInterval: 0.3)  // the waiter is blocked in pg_advisory_lock meanwhile
            order.append("holder")
        }
        XCTAssertEqual(waiterDone.wait(timeout: .now() + 10), .success)
        XCTAssertEqual(order.entries, ["holder", "waiter"])
        // Released by both: a third session takes it at once.
        XCTAssertEqual(try connect().queryFirst(tryLock, [.integer(key)]) { $0.int64(0) }, 1)
    }
}

/// What happened, in order, across threads.
private final class Order: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [String] = []

    func append(_ entry: String) { lock.withLock { list.append(entry) } }
    var entries: [String] { lock.withLock { list } }
}
