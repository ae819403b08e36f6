import CLibPQ

/// What a `postgres://` URL says, read by libpq's own parser (`PQconninfoParse`), kept so errors can
/// name the server without ever showing the password.
///
/// Why: libpq's messages and the URL itself go to logs and HTTP answers; the password must not.
struct PostgresConnectionInfo: Sendable {
    /// The URL without its password: `postgres://user@host:port/dbname`.
    let redactedURL: String
    /// The password the URL carries, if any (only used to scrub messages).
    private let password: String?

    /// Parses `url`; a URL libpq cannot read throws `invalidConfiguration` (its password scrubbed).
    init(url: String) throws(StoreError) {
        guard ["postgres://", "postgresql://"].contains(where: { url.lowercased().hasPrefix($0) }) else {
            throw StoreError.invalidConfiguration("a PostgreSQL URL starts with postgres:// or postgresql://")
        }
        var error: UnsafeMutablePointer<CChar>?
        guard let options = PQconninfoParse(url, &error) else {
            let why = error.map { String(cString: $0) } ?? "out of memory"
            PQfreemem(error)
            // The parser failed, so the password cannot be told apart: say nothing of the URL.
            throw StoreError.invalidConfiguration(
                "the PostgreSQL URL cannot be read: \(why.trimmingTrailingNewlines)".replacing(url, with: "…"))
        }
        defer { PQconninfoFree(options) }
        var values: [String: String] = [:]
        var option = options
        while let keyword = option.pointee.keyword {
            if let value = option.pointee.val {
                values[String(cString: keyword)] = String(cString: value)
            }
            option += 1
        }
        password = values["password"].flatMap { $0.isEmpty ? nil : $0 }
        let user = values["user"].map { "\($0)@" } ?? ""
        let host = values["host"] ?? values["hostaddr"] ?? "localhost"
        let port = values["port"].map { ":\($0)" } ?? ""
        redactedURL = "postgres://\(user)\(host)\(port)/\(values["dbname"] ?? "")"
    }

    /// `message` with the password replaced by `***`.
    func scrub(_ message: String) -> String {
        let trimmed = message.trimmingTrailingNewlines
        guard let password else { return trimmed }
        return trimmed.replacing(password, with: "***")
    }
}

extension String {
    fileprivate var trimmingTrailingNewlines: String {
        var text = Substring(self)
        while let last = text.last, last.isNewline || last == " " { text.removeLast() }
        return String(text)
    }
}
