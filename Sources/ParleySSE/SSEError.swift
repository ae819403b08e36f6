/// A protocol error in an event stream. The stream cannot be trusted past it, so decoding stops.
public enum SSEError: Error, Sendable, Equatable {
    /// A line was not valid UTF-8 (never silently replaced).
    case invalidUTF8
    /// A line grew past `SSEDecoder.maxLineBytes` without a line terminator.
    case lineTooLong(limit: Int)
    /// The `data` of one event grew past `SSEDecoder.maxEventBytes`.
    case eventTooLarge(limit: Int)
}
