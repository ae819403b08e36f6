/// Why an A2UI message was refused: said to the model in the tool's result so it can fix it in the
/// same turn (never shown on the page, which only ever gets valid messages).
public struct SurfaceError: Error, Sendable, Equatable, CustomStringConvertible {
    public let message: String
    public let surfaceID: String?

    public init(_ message: String, surfaceID: String? = nil) {
        self.message = message
        self.surfaceID = surfaceID
    }

    public var description: String { message }
}
