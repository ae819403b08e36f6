/// Why `HTTPServer.start()` failed.
public enum HTTPServerError: Error, Sendable, Equatable {
    /// `host` is not an IPv4 or IPv6 literal.
    case invalidHost(String)
    /// libmicrohttpd could not start (port in use, no permission, bad option); details went to stderr.
    case startFailed(host: String, port: Int)
    case alreadyStarted
    /// The upload directory could not be created or made (only servers with upload routes need one).
    case uploadDirectoryUnusable(path: String, reason: String)
}
