/// How many long-lived answers one user may hold open at once (`OpenStreams` enforces them). Both
/// apply in local and team mode alike, to every credential of the user together (tabs, scripts).
public struct StreamLimits: Sendable, Equatable {
    /// PARLEY_MAX_STREAMS_PER_USER: `GET /api/events`, `GET /api/messages/{id}/stream` and streamed
    /// `POST /v1/chat/completions`, counted together. Each holds a connection for as long as it is
    /// open, so without a bound one member fills `PARLEY_MAX_CONNECTIONS` and nobody else is answered.
    /// 32 is a page's one stream per tab for more tabs than anyone keeps, plus scripts.
    public var maxStreamsPerUser = 32
    /// PARLEY_MAX_EXPORTS_PER_USER: concurrent `GET /api/export`s. Each one keeps a server thread
    /// busy (reading and encoding conversations) whenever its client can take bytes: twenty at once
    /// of one 8 MB account slowed every other user's requests from 0.9 ms to 952 ms. A person needs
    /// one at a time; 2 leaves room for a retry while a cut one is still being torn down.
    public var maxExportsPerUser = 2

    public init() {}
}
