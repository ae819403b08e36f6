import ParleyPrimitives

/// The surfaces of one reply while it streams: the branch's board, and for each `render_ui` call its
/// extractor and what it drew or had refused. Fed the call's argument fragments, it returns the messages
/// to send now; finished, it gives the call's result (surfaces drawn, errors) for the model.
///
/// Concurrency: a class, owned by one reply's generation (an actor) and used only from it.
public final class SurfaceSession {
    /// A valid message to send and store, for its surface.
    public struct Emitted: Sendable, Equatable {
        public let surfaceID: String
        public let message: JSON
    }

    private final class Call {
        let extractor: MessageExtractor
        var count = 0
        /// Surfaces in the order first drawn, with how many of their messages were sent.
        var drawn: [(surfaceID: String, messages: Int)] = []
        var errors: [JSON] = []

        init(limits: SurfaceLimits) {
            extractor = MessageExtractor(limits: limits)
        }
    }

    private var board: SurfaceBoard
    private var calls: [String: Call] = [:]

    public init(board: SurfaceBoard) {
        self.board = board
    }

    /// Reads a fragment of call `callID`'s arguments; returns the messages that became valid and complete.
    public func feed(call callID: String, _ fragment: String) -> [Emitted] {
        let call = self.call(callID)
        return take(call.extractor.feed(fragment), into: call)
    }

    /// The call's arguments are complete (or cut by a stop): the last messages, and its result.
    public func finish(call callID: String) -> (emitted: [Emitted], result: RenderResult) {
        let call = self.call(callID)
        let emitted = take(call.extractor.finish(), into: call)
        if let syntax = call.extractor.syntaxError {
            call.errors.append(.object(["message": .string(syntax)]))
        }
        calls[callID] = nil
        if calls.isEmpty {
            for error in board.finish() {
                call.errors.append(.object(["surface_id": .string(error.surfaceID ?? ""), "message": .string(error.message)]))
            }
        }
        return (emitted, RenderResult(drawn: call.drawn, errors: call.errors))
    }

    private func call(_ id: String) -> Call {
        if let call = calls[id] { return call }
        let call = Call(limits: board.limits)
        calls[id] = call
        return call
    }

    private func take(_ elements: [MessageExtractor.Element], into call: Call) -> [Emitted] {
        var out: [Emitted] = []
        for element in elements {
            let index = call.count
            call.count += 1
            switch element {
            case .fault(_, let reason):
                call.errors.append(.object(["index": .integer(Int64(index)), "message": .string("message \(index): \(reason)")]))
            case .message(let json):
                switch board.apply(json) {
                case .held:
                    break
                case .refused(let error):
                    var fields: [String: JSON] = ["index": .integer(Int64(index)), "message": .string("message \(index): \(error.message)")]
                    if let id = error.surfaceID { fields["surface_id"] = .string(id) }
                    call.errors.append(.object(fields))
                case .emitted(let messages):
                    for message in messages {
                        out.append(Emitted(surfaceID: message.surfaceID, message: message.json))
                        if let position = call.drawn.firstIndex(where: { $0.surfaceID == message.surfaceID }) {
                            call.drawn[position].messages += 1
                        } else {
                            call.drawn.append((message.surfaceID, 1))
                        }
                    }
                }
            }
        }
        return out
    }
}
