import ParleyPrimitives

/// What a `render_ui` call tells the model: the surfaces it drew (with how many messages each) and the
/// messages refused, with why, so it can fix them in the same turn. An error result only when nothing
/// was drawn and something was refused.
public struct RenderResult: Sendable, Equatable {
    public let drawn: [(surfaceID: String, messages: Int)]
    /// `{"index"?, "surface_id"?, "message"}` each.
    public let errors: [JSON]

    public static func == (lhs: RenderResult, rhs: RenderResult) -> Bool {
        lhs.errors == rhs.errors && lhs.drawn.map(\.surfaceID) == rhs.drawn.map(\.surfaceID)
            && lhs.drawn.map(\.messages) == rhs.drawn.map(\.messages)
    }

    public var isError: Bool { drawn.isEmpty && !errors.isEmpty }

    /// `{"surfaces":[{"surface_id","messages"}],"errors":[…]}`.
    public var structured: JSON {
        .object(["surfaces": .array(drawn.map { .object(["surface_id": .string($0.surfaceID),
                                                         "messages": .integer(Int64($0.messages))]) }),
                 "errors": .array(errors)])
    }

    /// The same, as the text a model reads.
    public var text: String {
        var lines: [String] = []
        if drawn.isEmpty {
            lines.append("No surface was drawn.")
        } else {
            lines.append("Drawn: " + drawn.map { "\($0.surfaceID) (\($0.messages) message\($0.messages == 1 ? "" : "s"))" }
                .joined(separator: ", ") + ".")
        }
        if !errors.isEmpty {
            lines.append("Refused (not shown; fix and send again):")
            lines += errors.compactMap { $0["message"]?.stringValue }.map { "- " + $0 }
        }
        return lines.joined(separator: "\n")
    }
}
