import Foundation
import ParleySSE
import ParleyTestSupport

/// How long `TestHTTPClient.readEvents` reads.
enum EventReadLimit: Sendable {
    /// Until the stop condition holds or the server ends the stream; a read that gets neither within
    /// this many seconds throws (with what arrived): a stream that stalls fails the test.
    case timeout(TimeInterval)
    /// At most this many seconds, returning what arrived: the end of the window is an expected outcome
    /// (deliberately short reads, "what does an idle stream send").
    case window(TimeInterval)
}

extension TestHTTPClient {
    /// The one way the tests read an event stream: until `until` holds for the events decoded so far
    /// (then the connection is closed) or the server ends it, within `limit`; then every event that
    /// arrived. Bytes that are not a valid event stream stop the read, and the final decode throws.
    /// Blocking: call it from a thread of its own (`Blocking.run`).
    func readEvents(_ url: String, headers: [(String, String)] = [], limit: EventReadLimit,
                    until: @escaping ([SSEEvent]) -> Bool) throws -> StreamRead {
        let stop: ([UInt8]) -> Bool = { bytes in
            var decoder = SSEDecoder()
            guard let events = try? decoder.decode(bytes) else { return true }
            return until(events)
        }
        let response = switch limit {
        case .timeout(let seconds): try stream(url, headers: headers, until: stop, timeout: seconds)
        case .window(let seconds): try stream(url, headers: headers, for: seconds, until: stop)
        }
        var decoder = SSEDecoder()
        let events = try decoder.decode(response.body)
        return StreamRead(status: response.status, headers: response.headers, events: events, raw: response.text)
    }
}
