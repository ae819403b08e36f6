extension Duration {
    /// Whole milliseconds, rounded toward zero: what C APIs take (SQLite's busy timeout, libcurl's
    /// timeouts, epoll's wait) and what settings print.
    public var milliseconds: Int64 {
        components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000
    }
}
