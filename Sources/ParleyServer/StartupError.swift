/// Why Parley will not start with a readable configuration: `parley` prints it in one line and exits 2.
public enum StartupError: Error, CustomStringConvertible {
    /// Team mode with no enabled admin and nothing to create one from.
    case noAdmin
    /// The `parley-media-worker` executable that decodes uploaded images and PDFs cannot be run; the
    /// value says which path and why.
    case noMediaWorker(String)

    public var description: String {
        switch self {
        case .noAdmin:
            "team mode needs an admin: set PARLEY_ADMIN_USER and PARLEY_ADMIN_PASSWORD for the first start, "
                + "or run `parley user add NAME --admin` (or set PARLEY_AUTH=off to run without accounts)"
        case .noMediaWorker(let problem):
            "\(problem): uploaded images and PDFs are decoded by it; install it beside parley "
                + "(swift build --product parley-media-worker) or set PARLEY_MEDIA_WORKER to its path"
        }
    }
}
