import Foundation
import ParleyRedis
import XCTest

/// The pool from many tasks at once, counters shared through Lua, and the figures of a round trip.
final class RedisPoolTests: XCTestCase {
    func testManyTasksShareAPool() async throws {
        let pool = RedisConnectionPool(url: try RedisTestServer.url(), size: 4)
        let counter = RedisTestServer.key("counter")
        let stream = RedisTestServer.key("pool-stream")
        defer { _ = try? pool.withConnection { try $0.del([counter, stream]) } }
        let tasks = 64
        let each = 50
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0..<tasks {
                group.addTask {
                    for step in 0..<each {
                        _ = try pool.withConnection { try $0.command(["INCR", RedisArgument(counter)]) }
                        // Appends from many connections at once all land.
                        _ = try pool.withConnection {
                            try $0.command(["XADD", RedisArgument(stream), "*", "t", RedisArgument(task), "s", RedisArgument(step)])
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        try pool.withConnection { redis in
            XCTAssertEqual(try redis.command(["GET", RedisArgument(counter)]).text, "\(tasks * each)")
            XCTAssertEqual(try redis.command(["XLEN", RedisArgument(stream)]), .integer(Int64(tasks * each)))
            // Every pooled connection was used (and no more were opened).
            let clients = try redis.command(["CLIENT", "LIST"]).text ?? ""
            XCTAssertGreaterThanOrEqual(clients.split(separator: "\n").count, pool.size)
        }
    }

    /// INCR and PEXPIRE in one script: the window starts with the first hit and ends on time; a
    /// flushed script cache is loaded again.
    func testCounterWithExpiry() throws {
        let redis = try RedisTestServer.connection()
        let key = RedisTestServer.key("rate")
        defer { _ = try? redis.del([key]) }
        XCTAssertEqual(try redis.increment(key, window: .milliseconds(400)), 1)
        XCTAssertEqual(try redis.increment(key, window: .milliseconds(400)), 2)
        guard let ttl = try redis.command(["PTTL", RedisArgument(key)]).integer else { return XCTFail("PTTL") }
        XCTAssertTrue((1...400).contains(ttl), "\(ttl)")
        _ = try RedisTestServer.connection().command(["SCRIPT", "FLUSH"])
        XCTAssertEqual(try redis.increment(key, window: .milliseconds(400)), 3)
        Thread.sleep(forTimeInterval: 0.5)
        XCTAssertEqual(try redis.increment(key, window: .milliseconds(400)), 1)
        XCTAssertEqual(try redis.eval("return {KEYS[1], ARGV[1]}", keys: ["k"], arguments: [RedisArgument(bytes: [0, 255])]),
                       .array([.string(Array("k".utf8)), .string([0, 255])]))
        XCTAssertThrowsError(try redis.eval("return redis.call('NOSUCH')", keys: [])) { error in
            guard case .server = error as? RedisError else { return XCTFail("\(error)") }
        }
    }

    func testPublishReachesASubscriber() throws {
        let url = try RedisTestServer.url()
        let channel = RedisTestServer.key("channel")
        let subscriber = RedisConnection(url: url)
        XCTAssertEqual(try subscriber.command(["SUBSCRIBE", RedisArgument(channel)]).elements?.count, 3)
        let publisher = RedisConnection(url: url)
        XCTAssertEqual(try publisher.publish(channel, [0, 1, 2]), 1)
        XCTAssertEqual(try publisher.publish(channel + ":nobody", [1]), 0)
    }

    /// 1,000 XADDs one after another, then the same pipelined by 100: the cost of an append
    /// acknowledged by Redis, which issue 24 pays once per frame. Prints the figures.
    func testAppendRoundTripFigures() throws {
        let redis = try RedisTestServer.connection()
        let stream = RedisTestServer.key("latency")
        defer { _ = try? redis.del([stream]) }
        let payload = [RedisStreamEntry.Field("d", String(repeating: "token ", count: 8))]
        var samples: [Duration] = []
        for id in 1...1000 {
            let start = ContinuousClock.now
            XCTAssertEqual(try redis.xadd(stream, id: RedisStreamID(eventID: Int64(id))!, fields: payload), .accepted)
            samples.append(ContinuousClock.now - start)
        }
        samples.sort()
        let p50 = samples[499]
        let p99 = samples[989]
        let batches = 10
        let pipelineStart = ContinuousClock.now
        for batch in 0..<batches {
            let entries = (1...100).map { index in
                RedisStreamEntry(id: RedisStreamID(eventID: Int64(1000 + batch * 100 + index))!, fields: payload)
            }
            XCTAssertEqual(try redis.xadd(stream, entries: entries), Array(repeating: .accepted, count: 100))
        }
        let perAppend = (ContinuousClock.now - pipelineStart) / (batches * 100)
        func microseconds(_ duration: Duration) -> String {
            let (seconds, attoseconds) = duration.components
            return "\(Int(Double(seconds) * 1e6 + Double(attoseconds) / 1e12)) µs"
        }
        print("redis XADD round trip, 1,000 calls on loopback: p50 \(microseconds(p50)), p99 \(microseconds(p99));"
              + " pipelined by 100: \(microseconds(perAppend)) per append")
        XCTAssertLessThan(p50, .milliseconds(5))
        XCTAssertLessThan(p99, .milliseconds(50))
    }
}
