import CMicroHTTPD

/// The libmicrohttpd connection an event stream was queued on, as its writer uses it: the socket to
/// take over, and the suspend and resume around that. Why closures: the writer's tests stand in for
/// libmicrohttpd with a socketpair and a record of the calls, while the socket loop stays real.
///
/// Contract: `suspend` is called once, at the hand-off; `resume` at most once, after it (the writer's
/// `Delivery` moves guarantee both); neither after libmicrohttpd reported the connection gone.
struct StreamConnection: Sendable {
    /// The connection's socket, or -1.
    let socket: @Sendable () -> Int32
    let suspend: @Sendable () -> Void
    let resume: @Sendable () -> Void
}

extension StreamConnection {
    /// A libmicrohttpd connection (its suspend and resume are thread-safe).
    init(_ connection: ConnectionHandle) {
        self.init(
            socket: { parley_mhd_connection_fd(connection.raw) },
            suspend: { MHD_suspend_connection(connection.raw) },
            resume: { MHD_resume_connection(connection.raw) })
    }
}
