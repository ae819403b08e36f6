import Foundation
import ParleySSE
import ParleyTestSupport
import XCTest

extension TestParley {
    /// Reads `GET /api/events` until `until` holds for the events so far (then closes the connection),
    /// or the server ends it. `ready` is opened when the stream's `ready` event arrives: from then on
    /// nothing published is missed, so a test acts only after it. With `window`, reads at most that
    /// long and returns what arrived (for "nothing else comes"); without, a read that times out throws.
    func userEvents(query: String = "", lastEventID: String? = nil, headers: [(String, String)] = [],
                    ready: FakeUpstream.Gate? = nil, window: TimeInterval? = nil,
                    until: @escaping @Sendable ([SSEEvent]) -> Bool = { _ in false },
                    timeout: TimeInterval = 20) async throws -> StreamRead {
        let url = base + "/api/events" + (query.isEmpty ? "" : "?" + query)
        let headers = headers + (lastEventID.map { [("Last-Event-ID", $0)] } ?? [])
        let limit: EventReadLimit = window.map { .window($0) } ?? .timeout(timeout)
        return try await Blocking.run {
            try TestHTTPClient().readEvents(url, headers: headers, limit: limit) { events in
                if events.contains(where: { $0.type == "ready" }) { ready?.open() }
                return until(events)
            }
        }
    }
}

extension StreamRead {
    /// The notifications (every event but `ready` and the followed reply's), as (type, data).
    var notifications: [(type: String, data: [String: Any])] {
        let reply: Set = ["ready", "snapshot", "reasoning", "block", "tail", "delta", "error", "done"]
        return events.filter { !reply.contains($0.type) }.map { ($0.type, data($0)) }
    }

    /// The notification part of the last id seen.
    var lastUserEventID: String? { events.last?.id }
}
