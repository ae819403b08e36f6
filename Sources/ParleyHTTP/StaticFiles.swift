import Foundation

/// Serves the public folder for GET/HEAD: `index.html` at `/` (and in sub-folders), content types by
/// extension, ETag (size + mtime) with If-None-Match -> 304, Last-Modified. HTML is `no-cache`, other
/// assets get a modest max-age. Anything that could escape the folder (`..`, `.` or dot-file segments,
/// backslashes, NUL, symlinks resolving outside it) is answered as not found.
public struct StaticFiles: Sendable {
    /// The folder's resolved real path; nil when it does not exist (nothing is served).
    public let root: String?
    /// `Cache-Control` for everything but HTML.
    public var assetCacheControl = "public, max-age=3600"

    public init(directory: String) {
        root = StaticFiles.realPath(directory)
    }

    /// The file's response, or nil when there is no such servable file (the caller answers 404).
    public func response(for request: HTTPRequest) -> HTTPResponse? {
        guard request.method == "GET" || request.method == "HEAD", let root else { return nil }
        guard let segments = StaticFiles.safeSegments(request.path) else { return nil }
        var candidate = ([root] + segments).joined(separator: "/")
        var info = stat()
        guard var resolved = StaticFiles.realPath(candidate), StaticFiles.isInside(resolved, root: root),
            stat(resolved, &info) == 0
        else { return nil }
        if (info.st_mode & S_IFMT) == S_IFDIR {
            candidate = resolved + "/index.html"
            guard let index = StaticFiles.realPath(candidate), StaticFiles.isInside(index, root: root),
                stat(index, &info) == 0
            else { return nil }
            resolved = index
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else { return nil }

        let mtime = Int64(info.st_mtim.tv_sec)
        let etag = "\"\(String(info.st_size, radix: 16))-\(String(mtime, radix: 16))"
            + "\(String(info.st_mtim.tv_nsec, radix: 16))\""
        let type = StaticFiles.contentType(forPath: resolved)
        let headers: [(String, String)] = [
            ("Content-Type", type),
            ("ETag", etag),
            ("Last-Modified", StaticFiles.httpDate(mtime)),
            ("Cache-Control", type.hasPrefix("text/html") ? "no-cache" : assetCacheControl),
        ]
        if let condition = request.header("If-None-Match"), StaticFiles.matches(condition, etag: etag) {
            return HTTPResponse(status: 304, headers: headers)
        }
        guard let data = FileManager.default.contents(atPath: resolved) else { return nil }
        return HTTPResponse(status: 200, headers: headers, body: .bytes(Array(data)))
    }

    // MARK: - Path safety

    /// The decoded path's segments, or nil when any segment could step outside or hide something.
    static func safeSegments(_ path: String) -> [String]? {
        if path.contains("\0") || path.contains("\\") { return nil }
        let segments = path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        for segment in segments where segment.hasPrefix(".") { return nil }
        return segments
    }

    static func isInside(_ path: String, root: String) -> Bool {
        path == root || path.hasPrefix(root.hasSuffix("/") ? root : root + "/")
    }

    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    // MARK: - Headers

    static func contentType(forPath path: String) -> String {
        let ext = path.split(separator: ".").last.map { $0.lowercased() } ?? ""
        switch ext {
        case "html", "htm": return "text/html; charset=utf-8"
        case "js", "mjs": return "text/javascript; charset=utf-8"
        case "css": return "text/css; charset=utf-8"
        case "svg": return "image/svg+xml"
        case "png": return "image/png"
        case "ico": return "image/x-icon"
        case "json": return "application/json; charset=utf-8"
        case "webmanifest": return "application/manifest+json"
        case "txt": return "text/plain; charset=utf-8"
        case "woff2": return "font/woff2"
        default: return "application/octet-stream"
        }
    }

    static func matches(_ condition: String, etag: String) -> Bool {
        condition.split(separator: ",").contains { candidate in
            var tag = candidate.trimmingCharacters(in: .whitespaces)
            if tag == "*" { return true }
            if tag.hasPrefix("W/") { tag.removeFirst(2) }
            return tag == etag
        }
    }

    /// RFC 9110 IMF-fixdate.
    static func httpDate(_ seconds: Int64) -> String {
        var time = time_t(seconds)
        var parts = tm()
        gmtime_r(&time, &parts)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(days[Int(parts.tm_wday) % 7]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon) % 12]) "
            + "\(parts.tm_year + 1900) \(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
    }
}
