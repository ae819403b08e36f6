/// Where a PostgreSQL store lives: a `postgres://` or `postgresql://` URL as libpq reads it
/// (`postgres://user:password@host:port/database?sslmode=…`).
///
/// Its `description` never shows the password, so it can go into logs and error messages.
public struct PostgresLocation: Sendable, Equatable, CustomStringConvertible {
    /// The URL as given, password included: only libpq sees it.
    public let url: String

    /// Nil unless `url` starts with `postgres://` or `postgresql://` and names a host or a database.
    public init?(url: String) {
        let trimmed = url.trimmingCharacters(in: .whitespaces)
        guard let scheme = ["postgres://", "postgresql://"].first(where: { trimmed.lowercased().hasPrefix($0) }),
              trimmed.count > scheme.count
        else { return nil }
        self.url = trimmed
    }

    /// The URL with its password (if any) replaced by `***`.
    public var description: String {
        guard let schemeEnd = url.range(of: "://") else { return url }
        let rest = url[schemeEnd.upperBound...]
        guard let at = rest.lastIndex(of: "@") else { return url }
        let userInfo = rest[..<at]
        guard let colon = userInfo.firstIndex(of: ":") else { return url }
        return String(url[..<schemeEnd.upperBound]) + userInfo[..<colon] + ":***" + rest[at...]
    }
}
