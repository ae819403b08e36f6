import ParleyAPI
import ParleyGeneration
import ParleyHTTP
import ParleyStore
import Synchronization

/// Relays one reply's generation events to an OpenAI-style stream: the role chunk first, then a
/// content (or reasoning) chunk per delta, a tool call's first chunk (id, name) when the model begins
/// it and an arguments chunk per fragment (calls indexed in this response's order), a chunk with empty
/// content carrying `logprobs` after the text they describe (when asked for), and at `done` the finish chunk, the usage chunk (with
/// `include_usage`) and `[DONE]`, read from the stored message so the usage is the one stored
/// (provider's, or the estimate). A client that leaves before the end stops the reply: the
/// upstream call is aborted and the message stored `stopped`.
///
/// Thread-safe: `deliver` runs on the generation's actor, `clientLeft` on a server thread; the
/// little state they share is behind a mutex.
final class OpenAIStreamRelay: Sendable {
    private struct State {
        /// UTF-8 bytes of the answer already sent (a snapshot sends only what lies beyond); a continued
        /// reply starts at what it held before this call (the client has it).
        var sentContent = 0
        var sentReasoning = 0
        /// This response's tool calls: Parley's call id to the call's `index` in the chunks.
        var calls: [String: Int] = [:]
        /// UTF-8 bytes of each call's arguments already sent.
        var sentArguments: [String: Int] = [:]
        /// The calls the reply held before this call (a continued reply's answered calls), never sent.
        var earlier: Set<String> = []
        /// A continued reply with earlier text: its new text follows a blank line in `content`
        /// (text parts are joined so), which the client is not sent.
        var separatorPending = false
        /// Set at `done`: the stream ends by itself, its close must not stop anything.
        var ended = false
        /// When a chunk was last written: keep-alives are only written after a quiet interval.
        var lastWrite = ContinuousClock.now
    }

    private let messageID: String
    private let encoder: OpenAIChunkEncoder
    private let writer: EventStreamWriter
    private let store: Store
    private let generations: Generations
    /// `: keep-alive` after each interval without a chunk (nil: never). libmicrohttpd does not watch a suspended
    /// connection's socket, so a client that left is only noticed when a write to it fails.
    private let keepAlive: Duration?
    /// The call asked for log probabilities: the relay replays the run from its start (a snapshot does not
    /// carry them), and writes each `logprobs` event as a chunk.
    private let logprobs: Bool
    private let state: Mutex<State>

    static let keepAliveComment: [UInt8] = Array(": keep-alive\n\n".utf8)

    /// - Parameter before: the reply as it was when this call started (empty for a new reply; a continued
    ///   one's earlier rounds, which its first snapshot repeats): its text and calls are never sent again.
    init(messageID: String, encoder: OpenAIChunkEncoder, writer: EventStreamWriter, store: Store,
         generations: Generations, keepAlive: Duration?, before: Message, logprobs: Bool = false) {
        self.logprobs = logprobs
        state = Mutex(State(sentContent: before.content.utf8.count, sentReasoning: before.reasoning.utf8.count,
                            earlier: Set(before.toolCalls.map(\.id)), separatorPending: !before.content.isEmpty))
        self.keepAlive = keepAlive
        self.messageID = messageID
        self.encoder = encoder
        self.writer = writer
        self.store = store
        self.generations = generations
    }

    /// Writes the role chunk, stops the reply if the client leaves early, and subscribes.
    func start() async {
        writer.write(encoder.roleChunk)
        if let keepAlive {
            let probe = Task { [self] in
                // Ends with the stream: a write to a closed writer returns false.
                while (try? await Task.sleep(for: keepAlive)) != nil {
                    let quiet = state.withLock { ContinuousClock.now - $0.lastWrite >= keepAlive }
                    if quiet, !writer.write(Self.keepAliveComment) { return }
                    if writer.isClosed { return }
                }
            }
            writer.onClose { probe.cancel() }
        }
        writer.onClose { [self] in
            guard !state.withLock({ $0.ended }) else { return }
            let generations = generations, messageID = messageID
            Task { _ = try? await generations.stop(messageID: messageID) }
        }
        do {
            // With log probabilities, every event of the run from its start (those sent before this subscribed too).
            let after = logprobs ? await generations.logStartID(of: messageID) : nil
            let subscription = try await generations.subscribe(messageID: messageID, after: after) { [self] events in
                deliver(events)
            }
            if let subscription {
                writer.onClose { Task { await subscription.cancel() } }
            }
        } catch {
            end(with: OpenAIError.from(error))
        }
    }

    /// Returns false once the subscriber is done (the end was reached or the client left).
    private func deliver(_ events: [GenerationEvent]) -> Bool {
        var pieces: [[UInt8]] = []
        var finished = false
        state.withLock { state in
            for event in events {
                switch event.payload {
                case .snapshot(let snapshot):
                    let reasoning = Array(snapshot.reasoning.utf8)
                    if reasoning.count > state.sentReasoning {
                        pieces.append(encoder.reasoning(String(decoding: reasoning[state.sentReasoning...], as: UTF8.self)))
                        state.sentReasoning = reasoning.count
                    }
                    let content = Array(snapshot.content.utf8)
                    if state.separatorPending, content.count > state.sentContent + 2 {
                        state.sentContent += 2
                        state.separatorPending = false
                    }
                    if content.count > state.sentContent {
                        pieces.append(encoder.content(String(decoding: content[state.sentContent...], as: UTF8.self)))
                        state.sentContent = content.count
                    }
                    // A subscriber that came after the end (or cannot be replayed) sees the calls only here.
                    for case .toolCall(let call) in snapshot.parts where !state.earlier.contains(call.id) {
                        pieces += toolCall(call, &state)
                        let arguments = Array(call.argumentsText.utf8)
                        let sent = state.sentArguments[call.id, default: 0]
                        if arguments.count > sent, let index = state.calls[call.id] {
                            pieces.append(encoder.toolCallArguments(
                                index: index, fragment: String(decoding: arguments[sent...], as: UTF8.self)))
                            state.sentArguments[call.id] = arguments.count
                        }
                    }
                case .delta(let text):
                    pieces.append(encoder.content(text))
                    state.sentContent += text.utf8.count + (state.separatorPending ? 2 : 0)
                    state.separatorPending = false
                case .reasoning(let text):
                    pieces.append(encoder.reasoning(text))
                    state.sentReasoning += text.utf8.count
                case .logprobs(let items):
                    // After the chunk of the text they describe: a chunk of their own, with empty content.
                    if logprobs { pieces.append(encoder.content("", logprobs: items)) }
                case .done:
                    state.ended = true
                    finished = true
                case .toolCall(let call):
                    pieces += toolCall(call, &state)
                case .toolCallDelta(let id, let fragment):
                    if let index = state.calls[id] {
                        pieces.append(encoder.toolCallArguments(index: index, fragment: fragment))
                        state.sentArguments[id, default: 0] += fragment.utf8.count
                    }
                case .block, .tail, .tailAppend, .tailHTML, .error, .toolResult, .surface:
                    // A client tool's result comes from the client; an error result (arguments not JSON) is its to see.
                    break
                }
            }
            if !pieces.isEmpty { state.lastWrite = ContinuousClock.now }
        }
        if !pieces.isEmpty, !writer.write(contentsOf: pieces) { return false }
        if finished {
            // The final state is stored before `done` is delivered; read off the generation's actor.
            Task { self.finish() }
            return false
        }
        return !writer.isClosed
    }

    /// The first chunk of a call of this response, once: the first event of a call announces it (id,
    /// name); later ones (complete, with parsed arguments) add nothing.
    private func toolCall(_ call: ToolCallPart, _ state: inout State) -> [[UInt8]] {
        guard state.calls[call.id] == nil, !state.earlier.contains(call.id) else { return [] }
        let index = state.calls.count
        state.calls[call.id] = index
        return [encoder.toolCallStart(index: index, id: OpenAIToolHistory.clientID(call), name: call.name)]
    }

    /// The finish chunk (or the error), the usage chunk, `[DONE]`.
    private func finish() {
        guard let message = try? store.message(id: messageID) else {
            end(with: OpenAIError(status: 404, message: "The reply no longer exists.", kind: .invalidRequest,
                                  param: nil, code: "not_found"))
            return
        }
        if let failure = OpenAIHandlers.failure(of: message) {
            end(with: failure)
            return
        }
        var pieces = [encoder.finish(OpenAIChunkEncoder.finishReason(message.finishReason))]
        if encoder.includeUsage { pieces.append(encoder.usage(ReplyUsage(message.usage))) }
        pieces.append(OpenAIChunkEncoder.done)
        writer.write(contentsOf: pieces)
        writer.finish()
    }

    private func end(with error: OpenAIError) {
        state.withLock { $0.ended = true }
        writer.write(contentsOf: [OpenAIChunkEncoder.error(error), OpenAIChunkEncoder.done])
        writer.finish()
    }
}
