import Foundation
@testable import ParleyCluster
import ParleyRedis
import Synchronization
import XCTest

/// Two nodes racing for the lease of one reply whose node died: exactly one wins, every time (100 runs,
/// the two `SET NX` sent at once from two threads), and the lease names the winner.
final class LeaseRaceTests: XCTestCase {
    func testTwoNodesRacingForOneLeaseExactlyOneWinsIn100Runs() throws {
        let url = try TestRedis.url()
        let prefix = TestRedis.prefix()
        let nodes = ["node-b", "node-c"].map {
            RedisReplyRelay(shared: SharedState(url: url, prefix: prefix, poolSize: 2), retain: .seconds(5), nodeID: $0)
        }
        for run in 0..<100 {
            let message = "reply-\(run)"
            let wins = Wins()
            let start = DispatchSemaphore(value: 0)
            let done = DispatchGroup()
            for (index, node) in nodes.enumerated() {
                done.enter()
                Thread.detachNewThread {
                    start.wait()
                    wins.set(index, LeaseKeeper.win(message, relay: node, lease: .seconds(5)))
                    done.leave()
                }
            }
            start.signal()
            start.signal()
            done.wait()
            let winners = wins.winners
            XCTAssertEqual(winners.count, 1, "run \(run): \(winners)")
            let holder = try nodes[0].shared.pool.withConnection { connection throws(RedisError) in
                try connection.command(["GET", RedisArgument(nodes[0].keys.lease(message))]).text
            }
            XCTAssertEqual(holder, winners.first.map { nodes[$0].nodeID }, "run \(run)")
        }
    }
}

/// Which racers won, written from their threads.
private final class Wins: Sendable {
    private let won = Mutex<[Int: Bool]>([:])

    func set(_ index: Int, _ value: Bool) { won.withLock { $0[index] = value } }

    var winners: [Int] { won.withLock { $0.filter(\.value).map(\.key).sorted() } }
}
