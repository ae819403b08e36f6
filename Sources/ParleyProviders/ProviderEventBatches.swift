/// A model call's events, one batch per upstream read, pulled by the consumer in its own isolation.
///
/// Why: a provider stream ran a task of its own. The upstream thread handed each read to that task,
/// which decoded it and handed every event on to the reply's actor: two hops and a lock per event
/// for each chunk. Pulled with `next(isolation:)`, a read goes from the upstream thread straight to
/// the consumer (the reply's actor), which decodes and parses it there and gets its events at once:
/// one hop per read. The data flow is the same: upstream bytes → `SSEDecoder` → the provider's
/// parser → `ProviderEvent`s.
///
/// Iterating starts the call; cancelling the consuming task or dropping the iterator cancels it at
/// once (the upstream body stream's termination). Failures are thrown as `ProviderError`.
public struct ProviderEventBatches: AsyncSequence, Sendable {
    public typealias Element = [ProviderEvent]
    public typealias Failure = any Error

    private let open: @Sendable () -> any ProviderEventSource

    /// The events of `stream` (the demo, providers without an upstream reader), one per batch.
    public init(_ stream: AsyncThrowingStream<ProviderEvent, Error>) {
        open = { StreamEventSource(events: stream.makeAsyncIterator()) }
    }

    init(_ open: @escaping @Sendable () -> any ProviderEventSource) {
        self.open = open
    }

    public func makeAsyncIterator() -> Iterator {
        Iterator(source: open())
    }

    /// Reads the batches in the caller's isolation (no hop of its own).
    public struct Iterator: AsyncIteratorProtocol {
        var source: any ProviderEventSource

        public mutating func next(isolation actor: isolated (any Actor)?) async throws -> [ProviderEvent]? {
            try await source.nextBatch(isolation: actor)
        }

        public mutating func next() async throws -> [ProviderEvent]? {
            try await next(isolation: nil)
        }
    }

    /// The same events one at a time, from a task of their own (model titles, tests).
    public var events: AsyncThrowingStream<ProviderEvent, Error> {
        let batches = self
        return providerStream { continuation in
            var iterator = batches.makeAsyncIterator()
            while let batch = try await iterator.next() {
                for event in batch { continuation.yield(event) }
            }
        }
    }
}

/// Where a `ProviderEventBatches` gets its batches: nil at the end.
protocol ProviderEventSource {
    mutating func nextBatch(isolation actor: isolated (any Actor)?) async throws -> [ProviderEvent]?
}

/// An `AsyncThrowingStream`'s events, one per batch.
private struct StreamEventSource: ProviderEventSource {
    var events: AsyncThrowingStream<ProviderEvent, Error>.Iterator

    mutating func nextBatch(isolation actor: isolated (any Actor)?) async throws -> [ProviderEvent]? {
        try await events.next(isolation: actor).map { [$0] }
    }
}
