/// What became of an `XADD` with an explicit id.
public enum RedisStreamAppend: Sendable, Equatable {
    /// Redis stored the entry under the id given.
    case accepted
    /// Redis refused it because the stream's top id is already at or past it: for Parley, whose
    /// owner alone writes a reply's stream with growing ids, this is a retry of an entry already
    /// stored, so the caller goes on as if it had been accepted now.
    case duplicate
}
