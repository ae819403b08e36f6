import Foundation
import ParleyHTTP
import ParleyTestSupport
import XCTest

/// Clients that try to hold every connection: headers sent a byte at a time (slowloris), and many
/// connections from one address. 127.0.0.2 plays the attacker, 127.0.0.1 everyone else.
final class SlowClientTests: XCTestCase {
    private func server(_ configure: (inout HTTPServerConfiguration) -> Void) throws -> (port: Int, base: String) {
        let (server, base) = try startServer(self, configure: configure) { router in
            router.on("GET", "/api/health", immediate: { _ in .text("ok") })
        }
        return (server.port, base)
    }

    /// Waits until `condition` holds, checking every 20 ms, at most `timeout` seconds.
    private func eventually(_ timeout: TimeInterval, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while !condition() {
            if Date() > deadline { return false }
            usleep(20_000)
        }
        return true
    }

    func testHeadersTricklingInAreCutAtTheHeaderDeadlineNotResetPerByte() throws {
        let (port, _) = try server {
            $0.headerTimeout = 1
            $0.connectionTimeout = 60
        }
        let connection = try RawConnection(port: port)
        let started = Date()
        var closedAfter: TimeInterval?
        // One byte every 100 ms: each byte would restart libmicrohttpd's own idle timeout.
        for byte in "GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ".utf8 + Array(repeating: UInt8(ascii: "a"), count: 400) {
            if !connection.send([byte]) || connection.isClosedByPeer {
                closedAfter = Date().timeIntervalSince(started)
                break
            }
            usleep(100_000)
        }
        let after = try XCTUnwrap(closedAfter, "the connection was never closed while its headers trickled in")
        XCTAssertGreaterThanOrEqual(after, 0.9)
        XCTAssertLessThan(after, 10, "closed near the 1 s deadline, far from the 60 s idle timeout")
    }

    func testAKeptAliveConnectionGetsANewDeadlineForEachRequest() throws {
        let (port, _) = try server { $0.headerTimeout = 1 }
        let connection = try RawConnection(port: port)
        for _ in 0..<3 {
            // Each request comes quickly, but together they take longer than one header timeout.
            connection.send("GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            usleep(600_000)
        }
        connection.send("GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        let received = connection.readUntilClosed(timeout: 10)
        XCTAssertEqual(received.statusLines, 4, received.text)
    }

    func testOneAddressCannotTakeEveryConnection() throws {
        let (port, base) = try server {
            $0.connectionLimit = 40
            $0.connectionsPerAddress = 8
            $0.headerTimeout = 60
            $0.threadPoolSize = 2
        }
        // The attacker opens five times its share and never finishes a request.
        var attackers: [RawConnection] = []
        for _ in 0..<40 {
            guard let connection = try? RawConnection(port: port, from: "127.0.0.2") else { continue }
            connection.send("GET /api/health HTTP/1.1\r\n")
            attackers.append(connection)
        }
        // Those past the share are closed by the server at once.
        XCTAssertTrue(eventually(10) { attackers.filter(\.isClosedByPeer).count >= 32 },
                      "connections past the per-address cap are closed")
        XCTAssertEqual(attackers.filter { !$0.isClosedByPeer }.count, 8)
        // Everyone else is still served.
        for _ in 0..<5 {
            XCTAssertEqual(try TestHTTPClient().request(base + "/api/health", timeout: 5).status, 200)
        }
    }

    func testATrustedProxyIsNotCapped() throws {
        let (port, base) = try server {
            $0.connectionLimit = 40
            $0.connectionsPerAddress = 4
            $0.trustedProxies = [AddressRange("127.0.0.2/31")!]  // a CIDR: 127.0.0.2 and .3
        }
        var proxied: [RawConnection] = []
        for _ in 0..<12 {
            let connection = try RawConnection(port: port, from: "127.0.0.2")
            connection.send("GET /api/health HTTP/1.1\r\n")
            proxied.append(connection)
        }
        // A full request on each proves the server took all of them.
        XCTAssertEqual(try TestHTTPClient().request(base + "/api/health", timeout: 5).status, 200)
        for connection in proxied {
            connection.send("Host: 127.0.0.1\r\nConnection: close\r\n\r\n")
            XCTAssertEqual(connection.readUntilClosed(timeout: 10).statusLines, 1)
        }
    }
}
