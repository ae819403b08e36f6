import Foundation
import ParleyHTTP
import ParleyServer
import ParleyUpstream
import Synchronization

/// `parley healthcheck`: asks the Parley configured here (same environment and flags as the server)
/// for `GET /api/health` on this machine, as Docker's HEALTHCHECK runs it inside the container.
public enum HealthCheck {
    /// Seconds to connect, and seconds without a byte, before the check fails.
    public static let connectTimeout: Duration = .seconds(2)
    public static let idleTimeout: Duration = .seconds(5)

    /// The URL the check asks, and the `Host` it sends when the bound address alone would get 421.
    public static func target(_ configuration: ParleyConfiguration) -> (url: String, host: String?) {
        let address: String = switch configuration.host {
        case "", "0.0.0.0": "127.0.0.1"  // every address: loopback is one of them
        case "::", "[::]": "[::1]"
        case let host where host.contains(":") && !host.hasPrefix("["): "[\(host)]"
        case let host: host
        }
        let url = "http://\(address):\(configuration.port)/api/health"
        guard let allowed = configuration.http.originPolicy.allowedHosts,
              !allowed.contains(OriginPolicy.hostName(address) ?? address) else {
            return (url, nil)
        }
        return (url, allowed.sorted().first)
    }

    /// Nil when Parley answered 200 `{"status":"ok"}`; otherwise why not, in one line.
    public static func run(_ configuration: ParleyConfiguration) async -> String? {
        let (url, host) = target(configuration)
        let request = UpstreamRequest(url: url, headers: host.map { [("Host", $0)] } ?? [],
                                      connectTimeout: connectTimeout, idleTimeout: idleTimeout,
                                      maxResponseBytes: 64 << 10)
        let client = UpstreamClient()
        defer { withExtendedLifetime(client) {} }
        do {
            let response = try await client.send(request)
            var body: [UInt8] = []
            for try await piece in response.body { body += piece }
            let text = String(decoding: body, as: UTF8.self)
            guard response.status == 200, text.replacingOccurrences(of: " ", with: "").contains(#""status":"ok""#) else {
                return "\(url) answered \(response.status): \(text.prefix(200))"
            }
            return nil
        } catch let error as UpstreamError {
            return switch error {
            case .connectionFailed(let why), .other(let why): "\(url): \(why)"
            case .idleTimeout: "\(url): no answer within \(idleTimeout)"
            case .responseTooLarge: "\(url): the answer is too large"
            case .cancelled: "\(url): cancelled"
            }
        } catch {
            return "\(url): \(error)"
        }
    }

    /// `run` for synchronous callers (`parley`'s main): blocks the calling thread until it is done.
    public static func runBlocking(_ configuration: ParleyConfiguration) -> String? {
        let outcome = Outcome()
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            let problem = await run(configuration)
            outcome.problem.withLock { $0 = problem }
            done.signal()
        }
        done.wait()
        return outcome.problem.withLock { $0 }
    }

    private final class Outcome: Sendable {
        let problem = Mutex<String?>("the check did not finish")
    }
}
