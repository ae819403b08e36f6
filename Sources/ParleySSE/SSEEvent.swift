/// One dispatched Server-Sent Event, as the WHATWG EventSource algorithm defines it.
///
/// `id` is the last event ID in effect when the event was dispatched (it persists across events);
/// `retry` is the reconnection time in milliseconds last set by a `retry` field, if any.
public struct SSEEvent: Sendable, Equatable {
    /// The `event` field, or "message" when the event named none.
    public var type: String
    /// The `data` lines joined with LF, without the final LF.
    public var data: String
    /// The last event ID (persists until another valid `id` field changes it).
    public var id: String
    /// The reconnection time in milliseconds from the latest valid `retry` field.
    public var retry: Int?

    public init(type: String = "message", data: String, id: String = "", retry: Int? = nil) {
        self.type = type
        self.data = data
        self.id = id
        self.retry = retry
    }
}
