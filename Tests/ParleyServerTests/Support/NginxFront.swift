import Foundation
import ParleyTestSupport
import XCTest

/// nginx in front of a cluster's nodes, as `make cluster` and docker-compose.yml run it: round-robin
/// with no sticky sessions and the README's event-stream settings (no buffering, long reads). Its
/// access log names the node (`$upstream_addr`) that served each request, so a test can show that
/// consecutive requests of one reply went to different nodes. One process (`master_process off`),
/// stopped when the test ends; needs nginx (`make test` installs nginx-light).
final class NginxFront: Sendable {
    let port: Int
    let directory: URL
    private let process: SpawnedProcess

    /// One request as the access log tells it: the node's port, method and path, status.
    struct Served: Equatable {
        let node: Int
        let method: String
        let path: String
        let status: Int
    }

    init(nodes: [TestParley]) throws {
        let executable = "/usr/sbin/nginx"
        guard FileManager.default.isExecutableFile(atPath: executable) else {
            if ProcessInfo.processInfo.environment["PARLEY_REQUIRE_REDIS"] == "1" { XCTFail("no nginx at \(executable)") }
            throw XCTSkip("no nginx (apt-get install nginx-light)")
        }
        directory = TestFiles.directory("parley-nginx")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let upstreams = nodes.map { "        server 127.0.0.1:\($0.app.port);\n" }.joined()
        let path = directory.path
        var started: (Int, SpawnedProcess)?
        // A free port can be taken between the probe and nginx's bind: a few tries.
        for _ in 0..<5 where started == nil {
            let port = LoopbackPort.free()
            let configuration = """
            daemon off;
            master_process off;
            worker_processes 1;
            pid \(path)/nginx.pid;
            error_log \(path)/error.log warn;
            events { worker_connections 1024; }
            http {
                log_format node '$upstream_addr $request_method $uri $status';
                access_log \(path)/access.log node;
                client_body_temp_path \(path)/client_body;
                proxy_temp_path \(path)/proxy;
                fastcgi_temp_path \(path)/fastcgi;
                uwsgi_temp_path \(path)/uwsgi;
                scgi_temp_path \(path)/scgi;
                client_max_body_size 64m;
                upstream parley {
            \(upstreams)        keepalive 32;
                }
                server {
                    listen 127.0.0.1:\(port);
                    location / {
                        proxy_pass http://parley;
                        proxy_http_version 1.1;
                        proxy_set_header Connection "";
                        proxy_set_header Host $http_host;
                        proxy_set_header X-Forwarded-For $remote_addr;
                        proxy_buffering off;
                        proxy_request_buffering off;
                        proxy_read_timeout 1h;
                    }
                }
            }
            """
            let file = directory.appendingPathComponent("nginx.conf")
            try configuration.write(to: file, atomically: true, encoding: .utf8)
            let process = try SpawnedProcess(executable: URL(fileURLWithPath: executable),
                                             arguments: ["-p", path, "-c", file.path, "-e", path + "/error.log"],
                                             environment: [:], captureOutput: false)
            let deadline = Date().addingTimeInterval(5)
            while process.isRunning, !LoopbackPort.accepts(port), Date() < deadline { usleep(20_000) }
            if process.isRunning, LoopbackPort.accepts(port) {
                started = (port, process)
            } else {
                process.send(SIGKILL)
                process.waitUntilExit()
            }
        }
        guard let (port, process) = started else {
            let log = (try? String(contentsOf: directory.appendingPathComponent("error.log"), encoding: .utf8)) ?? ""
            throw TestParleyError.timedOut("nginx did not start: \(log)")
        }
        self.port = port
        self.process = process
    }

    func stop() {
        process.send(SIGTERM)
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Every request nginx has finished, in order (an event stream is logged when it closes).
    func served() -> [Served] {
        let log = (try? String(contentsOf: directory.appendingPathComponent("access.log"), encoding: .utf8)) ?? ""
        return log.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ")
            guard fields.count == 4, let colon = fields[0].lastIndex(of: ":"),
                  let node = Int(fields[0][fields[0].index(after: colon)...]), let status = Int(fields[3]) else { return nil }
            return Served(node: node, method: String(fields[1]), path: String(fields[2]), status: status)
        }
    }

    /// The requests finished so far, once there are at least `count` (nginx writes a line after the
    /// response has gone out, so a client may be a moment ahead of the log).
    func served(atLeast count: Int) async throws -> [Served] {
        var lines = served()
        let deadline = ContinuousClock.now + .seconds(5)
        while lines.count < count, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
            lines = served()
        }
        return lines
    }

    /// The node that served the last finished `method` `path`.
    func node(of method: String, _ path: String) async throws -> Int {
        let deadline = ContinuousClock.now + .seconds(5)
        while ContinuousClock.now < deadline {
            if let node = served().last(where: { $0.method == method && $0.path == path })?.node { return node }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw TestParleyError.timedOut("nginx logged no \(method) \(path)")
    }

    /// Sends `GET /api/health` through `client` until one is served by `node`: round-robin then sends
    /// the next request to another node.
    func turn(past node: Int, _ client: TestParley) async throws {
        for _ in 0..<10 {
            let before = served().count
            _ = try await client.call("GET", "/api/health")
            if try await served(atLeast: before + 1).last?.node == node { return }
        }
        throw TestParleyError.timedOut("round-robin never reached node \(node)")
    }
}

extension XCTestCase {
    /// nginx round-robin in front of `nodes`, stopped when this test ends.
    func startFront(_ nodes: [TestParley]) throws -> NginxFront {
        let front = try NginxFront(nodes: nodes)
        addTeardownBlock { front.stop() }
        return front
    }
}

extension TestParley {
    /// This node's client, with every request sent through `front` instead (so to any node).
    func through(_ front: NginxFront) -> TestParley {
        TestParley(app: app, directory: directory, base: "http://127.0.0.1:\(front.port)")
    }
}
