import ParleyA2UI
import ParleyPrimitives
import ParleyStore

/// `parley/render_ui` (issue 22): its arguments are read while they stream, and each A2UI message that
/// is complete and valid goes out at once as a `surface` event and into the reply's parts; when the
/// arguments end, the call's result says what was drawn and what was refused. The call never goes to
/// a runner: drawing is all it does.
extension Generation {
    /// The `surface` events a fragment of call `index`'s arguments completes (none for other tools).
    func surfaceEvents(callIndex index: Int, fragment: String) -> [GenerationEvent] {
        guard let surfaces, let call = parts.openCall(index: index), call.tool == RenderUITool.id else { return [] }
        return record(surfaces.feed(call: call.id, fragment))
    }

    /// Ends a render_ui call of the round (its arguments are complete): the last messages, then its result.
    /// Returns false for other calls (they go on as any call).
    func drawSurfaces(_ call: inout ToolCallPart, into batch: inout [GenerationEvent]) -> Bool {
        guard let surfaces, call.tool == RenderUITool.id, toolbox.runner == .server else { return false }
        let finished = surfaces.finish(call: call.id)
        batch += record(finished.emitted)
        call.arguments = JSON(parsing: call.argumentsText).flatMap { $0.objectValue == nil ? nil : $0 }
        let result = finished.result
        call.result = ToolCallResult(content: [.object(["type": .string("text"), "text": .string(result.text)])],
                                     structuredContent: result.structured, isError: result.isError)
        call.status = result.isError ? .error : .complete
        parts.update(call)
        batch.append(event(.toolResult(call)))
        return true
    }

    private func record(_ emitted: [SurfaceSession.Emitted]) -> [GenerationEvent] {
        emitted.map { item in
            parts.appendSurface(item.surfaceID, message: item.message)
            return event(.surface(surfaceID: item.surfaceID, message: item.message))
        }
    }
}
