import Foundation
import ParleyRedis
import Synchronization
import XCTest

/// One Redis stream per live reply: appends with ids from event ids, idempotent retries, replay
/// after an id, and a blocking follow woken by another connection's append.
final class RedisStreamTests: XCTestCase {
    private func event(_ id: Int64) -> RedisStreamID { RedisStreamID(eventID: id)! }

    func testExplicitIdsAndIdempotentRetries() throws {
        let redis = try RedisTestServer.connection()
        let stream = RedisTestServer.key("xadd")
        defer { _ = try? redis.del([stream]) }
        let cut = Array("é".utf8).prefix(1) + [0]
        XCTAssertEqual(try redis.xadd(stream, id: event(1), fields: [.init("d", Array(cut))]), .accepted)
        XCTAssertEqual(try redis.xadd(stream, id: event(2), fields: [.init("d", "b")]), .accepted)
        // A retry of the top entry, or of an older one, is refused by Redis: a duplicate, stored once.
        XCTAssertEqual(try redis.xadd(stream, id: event(2), fields: [.init("d", "b")]), .duplicate)
        XCTAssertEqual(try redis.xadd(stream, id: event(1), fields: [.init("d", "x")]), .duplicate)
        XCTAssertEqual(try redis.command(["XLEN", RedisArgument(stream)]), .integer(2))
        let entries = try redis.xrange(stream, after: nil, count: 10)
        XCTAssertEqual(entries.map(\.id), [event(1), event(2)])
        XCTAssertEqual(entries[0].value("d"), Array(cut))
        XCTAssertEqual(entries.map { $0.id.eventID }, [1, 2])
        // Other refusals are errors, not duplicates.
        XCTAssertThrowsError(try redis.xadd(stream, id: .zero, fields: [.init("d", "z")])) { error in
            guard case .server(let text) = error as? RedisError else { return XCTFail("\(error)") }
            XCTAssertTrue(text.contains("greater than 0-0"), text)
        }
        let plain = RedisTestServer.key("string")
        defer { _ = try? redis.del([plain]) }
        _ = try redis.command(["SET", RedisArgument(plain), "v"])
        XCTAssertThrowsError(try redis.xadd(plain, id: event(1), fields: [.init("d", "z")])) { error in
            guard case .server(let text) = error as? RedisError else { return XCTFail("\(error)") }
            XCTAssertTrue(text.hasPrefix("WRONGTYPE"), text)
        }
    }

    /// A pipelined batch judges each append on its own: retried ids are duplicates, new ones land.
    func testBatchedAppends() throws {
        let redis = try RedisTestServer.connection()
        let stream = RedisTestServer.key("batch")
        defer { _ = try? redis.del([stream]) }
        func entries(_ ids: ClosedRange<Int64>) -> [RedisStreamEntry] {
            ids.map { RedisStreamEntry(id: event($0), fields: [.init("d", "\($0)")]) }
        }
        XCTAssertEqual(try redis.xadd(stream, entries: entries(1...3)), [.accepted, .accepted, .accepted])
        XCTAssertEqual(try redis.xadd(stream, entries: entries(2...5)), [.duplicate, .duplicate, .accepted, .accepted])
        XCTAssertEqual(try redis.xrange(stream, after: nil, count: 10).map { $0.value("d") }, (1...5).map { Array("\($0)".utf8) })
        XCTAssertThrowsError(try redis.xadd(stream, entries: [RedisStreamEntry(id: .zero, fields: [.init("d", "x")])]))
        try redis.ping()
    }

    func testReplayAfterAnId() throws {
        let redis = try RedisTestServer.connection()
        let stream = RedisTestServer.key("xrange")
        defer { _ = try? redis.del([stream]) }
        for id in 1...20 {
            XCTAssertEqual(try redis.xadd(stream, id: event(Int64(id)), fields: [.init("n", "\(id)")]), .accepted)
        }
        XCTAssertEqual(try redis.xrange(stream, after: event(5), count: 3).map { $0.id.eventID }, [6, 7, 8])
        XCTAssertEqual(try redis.xrange(stream, after: event(18), count: 100).map { $0.id.eventID }, [19, 20])
        XCTAssertEqual(try redis.xrange(stream, after: event(20), count: 100), [])
        XCTAssertEqual(try redis.xrange(stream, after: .zero, count: 2).map { $0.id.eventID }, [1, 2])
        XCTAssertEqual(try redis.xrange(stream + ":missing", after: nil, count: 5), [])
        // Trimmed: MAXLEN ~ keeps at least the last entries; what is gone is gone, so callers see a gap.
        XCTAssertEqual(try redis.xadd(stream, id: event(21), fields: [.init("n", "21")], maxLength: 1), .accepted)
        XCTAssertTrue(try redis.pexpire(stream, after: .seconds(60)))
        XCTAssertFalse(try redis.pexpire(stream + ":missing", after: .seconds(60)))
        XCTAssertEqual(try redis.del([stream, stream + ":missing"]), 1)
    }

    /// A reader blocked in XREAD wakes when another connection appends, well within the bound.
    func testBlockingReadWakesOnAnAppend() throws {
        let url = try RedisTestServer.url()
        let streams = [RedisTestServer.key("follow-a"), RedisTestServer.key("follow-b")]
        let writer = try RedisTestServer.connection()
        defer { _ = try? writer.del(streams) }
        XCTAssertEqual(try writer.xadd(streams[0], id: event(1), fields: [.init("d", "old")]), .accepted)
        let appendedAt = Mutex<ContinuousClock.Instant?>(nil)
        let append = Thread {
            Thread.sleep(forTimeInterval: 0.3)
            let other = RedisConnection(url: url)
            appendedAt.withLock { $0 = .now }
            _ = try? other.xadd(streams[1], id: RedisStreamID(eventID: 7)!, fields: [.init("d", "new")])
        }
        let reader = RedisConnection(url: url, commandTimeout: .seconds(1))
        // Past event 1 of the first stream, from the start of the second: waits, as nothing is new.
        let started = ContinuousClock.now
        append.start()
        let batches = try reader.xread([(streams[0], event(1)), (streams[1], .zero)], block: .seconds(5))
        let woke = ContinuousClock.now
        XCTAssertEqual(batches.count, 1)
        XCTAssertEqual(batches.first?.key, streams[1])
        XCTAssertEqual(batches.first?.entries.map(\.id), [event(7)])
        XCTAssertEqual(batches.first?.entries.first?.value("d"), Array("new".utf8))
        let appended = try XCTUnwrap(appendedAt.withLock { $0 })
        XCTAssertGreaterThan(appended, started)
        // Blocked longer than the command timeout (1 s) would allow a plain command: XREAD's own is longer.
        XCTAssertLessThan(woke - appended, .milliseconds(500), "woke \(woke - appended) after the append")
        // Nothing new: the wait ends empty after the block time, on a connection still usable.
        let waitStart = ContinuousClock.now
        XCTAssertEqual(try reader.xread([(streams[1], event(7))], block: .milliseconds(150), count: 10), [])
        XCTAssertGreaterThanOrEqual(ContinuousClock.now - waitStart, .milliseconds(140))
        XCTAssertEqual(try reader.xread([(streams[0], .zero)], block: nil).first?.entries.count, 1)
    }

    /// A block longer than the command timeout still ends normally (XREAD raises its socket timeout).
    func testBlockLongerThanTheCommandTimeout() throws {
        let reader = try RedisTestServer.connection(commandTimeout: .milliseconds(100))
        let stream = RedisTestServer.key("long-block")
        XCTAssertEqual(try reader.xread([(stream, .zero)], block: .milliseconds(400)), [])
        XCTAssertTrue(reader.isConnected)
        try reader.ping()
    }
}
