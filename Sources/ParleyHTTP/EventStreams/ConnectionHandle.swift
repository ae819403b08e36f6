/// A libmicrohttpd pointer (connection or daemon) that may cross threads: MHD's suspend/resume are
/// thread-safe, and the owner stops using it once the connection is reported gone.
struct ConnectionHandle: @unchecked Sendable {
    let raw: OpaquePointer
}
