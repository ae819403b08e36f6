import ParleySSE
import ParleyUpstream

/// An HTTP provider's call read in the consumer's isolation: sent with `UpstreamCall`'s retries, then
/// each read of the body decoded (`SSEDecoder`) and parsed (`EventStreamParser`) into one batch.
///
/// The events a read completed before a fault (a malformed frame, an error event) are returned first;
/// the fault is thrown by the next call, as a stream would yield them and then fail.
struct UpstreamEventSource<Parser: EventStreamParser>: ProviderEventSource {
    let call: UpstreamCall
    let request: UpstreamRequest
    var parser: Parser
    private var decoder = SSEDecoder()
    private var body: AsyncThrowingStream<[UInt8], Error>.Iterator?
    private var started = false
    private var ended = false
    /// A fault found after events of the same read: thrown once those were returned.
    private var fault: ProviderError?

    init(call: UpstreamCall, request: UpstreamRequest, parser: Parser) {
        self.call = call
        self.request = request
        self.parser = parser
    }

    mutating func nextBatch(isolation actor: isolated (any Actor)?) async throws -> [ProviderEvent]? {
        if let fault {
            self.fault = nil
            ended = true
            body = nil
            throw fault
        }
        guard !ended else { return nil }
        if !started {
            started = true
            do {
                body = try await call.send(request).body.makeAsyncIterator()
            } catch {
                ended = true
                throw error
            }
        }
        while true {
            let piece: [UInt8]?
            do {
                piece = try await body?.next(isolation: actor)
            } catch {
                ended = true
                body = nil
                throw Self.mapped(error, secrets: call.secrets)
            }
            guard let piece else { return try end(with: []) }
            var events: [SSEEvent] = []
            do {
                try decoder.decode(piece, into: &events)
            } catch {
                fault = ProviderError(code: .upstreamProtocol, message: "malformed event stream: \(error)")
            }
            // The well-formed events before a fault in the same read still count.
            var batch: [ProviderEvent] = []
            for event in events {
                do {
                    batch += try parser.consume(event)
                } catch {
                    fault = error.redacting(call.secrets)
                    break
                }
                if parser.isComplete {
                    // The terminal event came: what follows it in the read is never looked at.
                    fault = nil
                    return try end(with: batch)
                }
            }
            if let fault, batch.isEmpty {
                self.fault = nil
                ended = true
                body = nil
                throw fault
            }
            if !batch.isEmpty { return batch }
        }
    }

    /// The body ended or the parser saw the terminal event: the reader is dropped (which ends the
    /// transfer), and the parser's final events follow `batch`.
    private mutating func end(with batch: [ProviderEvent]) throws(ProviderError) -> [ProviderEvent]? {
        ended = true
        body = nil
        if Task.isCancelled { throw ProviderError(code: .cancelled, message: "the request was cancelled") }
        let final: [ProviderEvent]
        do {
            final = try parser.finish()
        } catch {
            throw error.redacting(call.secrets)
        }
        let all = batch + final
        return all.isEmpty ? nil : all
    }

    private static func mapped(_ error: any Error, secrets: [String]) -> ProviderError {
        switch error {
        case let error as ProviderError: error.redacting(secrets)
        case let error as UpstreamError: UpstreamCall.map(error, afterHeaders: true)
        default: ProviderError(code: .upstreamError, message: "\(error)").redacting(secrets)
        }
    }
}
