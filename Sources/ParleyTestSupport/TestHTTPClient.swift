import CCurl
import Foundation

/// A small blocking HTTP/1.1 client for tests, over one libcurl easy handle so consecutive requests reuse
/// the keep-alive connection. Not thread-safe: give each thread or task its own client.
public final class TestHTTPClient {
    public struct Response: Sendable {
        public var status: Int
        /// Lower-case names; repeated headers joined with `, `.
        public var headers: [String: String]
        public var body: [UInt8]
        public var text: String { String(decoding: body, as: UTF8.self) }
        public func header(_ name: String) -> String? { headers[name.lowercased()] }
    }

    public struct TransferError: Error, CustomStringConvertible {
        public let code: Int
        public let description: String
    }

    /// Receives bytes and header lines from libcurl's callbacks.
    private final class Sink {
        var body: [UInt8] = []
        var headers: [String: String] = [:]
        var stop: (([UInt8]) -> Bool)?
        var stopped = false
    }

    private let handle: UnsafeMutableRawPointer

    public init() {
        curl_global_init(Int(CURL_GLOBAL_DEFAULT))
        guard let handle = curl_easy_init() else { fatalError("curl_easy_init failed") }
        self.handle = handle
    }

    deinit {
        curl_easy_cleanup(handle)
    }

    /// Connections opened by the last transfer (0 when it reused the previous one).
    public var lastConnectsOpened: Int { info(CURLINFO_NUM_CONNECTS) }
    /// Local TCP port of the last transfer's connection.
    public var lastLocalPort: Int { info(CURLINFO_LOCAL_PORT) }

    /// GET.
    public func request(_ url: String, headers: [(String, String)] = [], timeout: TimeInterval = 10) throws -> Response {
        try request("GET", url, headers: headers, timeout: timeout)
    }

    public func request(
        _ method: String, _ url: String, headers: [(String, String)] = [], body: [UInt8]? = nil,
        timeout: TimeInterval = 10
    ) throws -> Response {
        let sink = Sink()
        let code = perform(method, url, headers: headers, body: body, timeout: timeout, sink: sink)
        guard code == CURLE_OK else {
            throw TransferError(code: Int(code.rawValue), description: String(cString: curl_easy_strerror(code)))
        }
        return Response(status: info(CURLINFO_RESPONSE_CODE), headers: sink.headers, body: sink.body)
    }

    /// A streaming read that hit its timeout before `until` held and before the server ended the
    /// response: a server that stalls or never sends its last event fails the test, with what arrived.
    public struct StreamTimeout: Error, CustomStringConvertible {
        public let timeout: TimeInterval
        public let received: Response
        public var description: String {
            "no end and no expected data within \(timeout) s; received \(received.body.count) bytes: "
                + String(decoding: received.body.suffix(2000), as: UTF8.self).debugDescription
        }
    }

    /// Reads a streaming response until `until` holds for the bytes so far (then aborts the transfer,
    /// closing the connection) or the server ends it. Throws `StreamTimeout` when `timeout` passes
    /// first: a timeout is never a success. To read for a while and stop, use `stream(_:for:)`.
    public func stream(
        _ url: String, headers: [(String, String)] = [], until: @escaping ([UInt8]) -> Bool,
        timeout: TimeInterval
    ) throws -> Response {
        let (timedOut, response) = try read(url, headers: headers, until: until, timeout: timeout)
        if timedOut { throw StreamTimeout(timeout: timeout, received: response) }
        return response
    }

    /// Reads a streaming response for `window` seconds and stops (earlier if `until` holds or the
    /// server ends it), returning what arrived. The end of the window is the expected outcome here:
    /// for "what does an idle stream send in N s" and deliberately short reads.
    public func stream(
        _ url: String, headers: [(String, String)] = [], for window: TimeInterval,
        until: @escaping ([UInt8]) -> Bool = { _ in false }
    ) throws -> Response {
        try read(url, headers: headers, until: until, timeout: window).response
    }

    /// One streaming GET; returns whether it ended on the timeout, and what arrived.
    private func read(
        _ url: String, headers: [(String, String)], until: @escaping ([UInt8]) -> Bool, timeout: TimeInterval
    ) throws -> (timedOut: Bool, response: Response) {
        let sink = Sink()
        sink.stop = until
        let code = perform("GET", url, headers: headers, body: nil, timeout: timeout, sink: sink)
        let response = Response(status: info(CURLINFO_RESPONSE_CODE), headers: sink.headers, body: sink.body)
        switch code {
        case CURLE_OK: return (false, response)
        case CURLE_WRITE_ERROR where sink.stopped: return (false, response)
        case CURLE_OPERATION_TIMEDOUT where !sink.stopped: return (true, response)
        default:
            throw TransferError(code: Int(code.rawValue), description: String(cString: curl_easy_strerror(code)))
        }
    }

    // MARK: - libcurl

    private func perform(
        _ method: String, _ url: String, headers: [(String, String)], body: [UInt8]?, timeout: TimeInterval,
        sink: Sink
    ) -> CURLcode {
        curl_easy_reset(handle)
        _ = parley_curl_setopt_string(handle, CURLOPT_URL, url)
        _ = parley_curl_setopt_long(handle, CURLOPT_PATH_AS_IS, 1)
        _ = parley_curl_setopt_long(handle, CURLOPT_NOSIGNAL, 1)
        _ = parley_curl_setopt_long(handle, CURLOPT_TIMEOUT_MS, Int(timeout * 1000))
        switch method {
        case "GET": break
        case "HEAD": _ = parley_curl_setopt_long(handle, CURLOPT_NOBODY, 1)
        default: _ = parley_curl_setopt_string(handle, CURLOPT_CUSTOMREQUEST, method)
        }
        if let body {
            _ = parley_curl_setopt_long(handle, CURLOPT_POST, 1)
            _ = parley_curl_setopt_long(handle, CURLOPT_POSTFIELDSIZE, body.count)
            var copy = body
            copy.withUnsafeMutableBytes { bytes in
                _ = parley_curl_setopt_pointer(handle, CURLOPT_COPYPOSTFIELDS, bytes.baseAddress)
            }
            if method != "POST" { _ = parley_curl_setopt_string(handle, CURLOPT_CUSTOMREQUEST, method) }
        }
        var list: UnsafeMutablePointer<curl_slist>?
        for (name, value) in headers { list = curl_slist_append(list, "\(name): \(value)") }
        defer { curl_slist_free_all(list) }
        if let list { _ = parley_curl_setopt_slist(handle, CURLOPT_HTTPHEADER, list) }

        let cls = Unmanaged.passUnretained(sink).toOpaque()
        _ = parley_curl_setopt_write_callback(handle) { data, size, count, cls in
            guard let cls else { return 0 }
            let sink = Unmanaged<Sink>.fromOpaque(cls).takeUnretainedValue()
            let length = size * count
            if let data, length > 0 {
                data.withMemoryRebound(to: UInt8.self, capacity: length) {
                    sink.body.append(contentsOf: UnsafeBufferPointer(start: $0, count: length))
                }
            }
            if let stop = sink.stop, stop(sink.body) {
                sink.stopped = true
                return 0
            }
            return length
        }
        _ = parley_curl_setopt_pointer(handle, CURLOPT_WRITEDATA, cls)
        _ = parley_curl_setopt_header_callback(handle) { data, size, count, cls in
            guard let cls, let data else { return 0 }
            let sink = Unmanaged<Sink>.fromOpaque(cls).takeUnretainedValue()
            let length = size * count
            let line = data.withMemoryRebound(to: UInt8.self, capacity: length) {
                String(decoding: UnsafeBufferPointer(start: $0, count: length), as: UTF8.self)
            }.trimmingCharacters(in: .whitespacesAndNewlines)
            if line.hasPrefix("HTTP/") {
                sink.headers = [:]
            } else if let colon = line.firstIndex(of: ":") {
                let name = line[..<colon].lowercased()
                let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                sink.headers[name] = sink.headers[name].map { $0 + ", " + value } ?? value
            }
            return length
        }
        _ = parley_curl_setopt_pointer(handle, CURLOPT_HEADERDATA, cls)
        return withExtendedLifetime(sink) { curl_easy_perform(handle) }
    }

    private func info(_ key: CURLINFO) -> Int {
        var value = 0
        _ = parley_curl_getinfo_long(handle, key, &value)
        return value
    }
}
